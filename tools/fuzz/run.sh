#!/usr/bin/env bash
# Builds sqlock's libFuzzer targets with clang (-fsanitize=fuzzer,address,
# undefined) and runs each for a bounded time on its corpus.
#
#   tools/fuzz/run.sh                   20 s per target (what CI runs)
#   SQLOCK_FUZZ_SECONDS=600 tools/fuzz/run.sh fuzz_url
#
# New inputs go to a scratch corpus, not the committed one; a crash leaves
# its input in $build/fuzz-artifacts/ and fails the run. Prints one line per
# target with its executions, and the total.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${SQLOCK_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${SQLOCK_FUZZ_SECONDS:-20}
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(fuzz_url fuzz_duration fuzz_name fuzz_holder)

command -v clang++ >/dev/null || { echo "run.sh: clang++ not found (apt-get install clang)" >&2; exit 1; }
mkdir -p "$build"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -O1 -g1, libFuzzer's advice: line tables are all a crash's stack needs.
cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DSQLOCK_BUILD_FUZZERS=ON -DSQLOCK_BUILD_TOOLS=ON -DSQLOCK_BUILD_TESTS=OFF \
    -DSQLOCK_INSTALL=OFF "${launcher[@]}" >"$build/fuzz-configure.log" 2>&1 ||
    { cat "$build/fuzz-configure.log" >&2; exit 1; }
nice -n 15 cmake --build "$build" -j2 --target "${targets[@]}" >"$build/fuzz-build.log" 2>&1 ||
    { tail -n 50 "$build/fuzz-build.log" >&2; exit 1; }

artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
work=$(mktemp -d /tmp/sqlock-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT

status=0
total=0
for target in "${targets[@]}"; do
    name=${target#fuzz_}
    mkdir -p "$work/$name"
    log="$work/$name.log"
    # The scratch corpus first: libFuzzer adds what it finds to the first
    # directory and only reads the others.
    # A fixed seed by default, so a CI failure can be replayed exactly
    # (SQLOCK_FUZZ_SEED=0 asks libFuzzer for a random one).
    if "$build/tools/fuzz/$target" -seed="${SQLOCK_FUZZ_SEED:-1}" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$artifacts/$target-" \
        "$work/$name" "$root/tools/fuzz/corpus/$name" >"$log" 2>&1; then
        result=ok
    else
        result=FAILED
        status=1
        grep -E "FUZZ_CHECK|ERROR|SUMMARY|Test unit written" "$log" >&2 || tail -n 30 "$log" >&2
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    runs=${runs:-0}
    total=$((total + runs))
    echo "$target: $runs executions in ${seconds}s, $result"
done
echo "fuzz: $total executions in total"
exit $status
