#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine: installs what it needs,
# builds, starts a throwaway server for each server backend, runs every test
# against every backend, and checks that the servers' passwords appear
# nowhere in what the tests printed.
#
# It names no backend: the backends are those of SQLOCK_BACKENDS, and each
# one's folder says what its tests need (tools/backends.sh): a server backend
# has src/backends/<name>/testing/server.sh, whose URL goes to the variables
# its test.conf names (SQLOCK_TEST_PG_URL, SQLOCK_TEST_MARIADB_URL, ...).
#
#   tests/run-all.sh            everything (what CI runs)
#   SQLOCK_SQLITE_ONLY=1 tests/run-all.sh
#                               developer shortcut without servers: the
#                               server backends' suites are reported as
#                               skipped
#   SQLOCK_SKIP_SANITIZERS=1 tests/run-all.sh
#                               developer shortcut: no sanitizer builds and
#                               no fuzzing (CI runs them)
#
# Three lanes run side by side, each with servers of its own (suites that
# restart a server must not take another lane's down):
#
#   main   build, a server of every server backend (PostgreSQL's with the
#          hostile defaults its test.conf asks for: serializable, low
#          timeouts; the sanitizer lanes' keep the stock ones), with its companions
#          (test.conf: PostgreSQL's PgBouncer in each pool mode), ctest (the
#          PostgreSQL suites also through PgBouncer, and across a failover to
#          a standby), a --quick benchmark smoke run
#   asan   tests/sanitizers.sh asan: every test under ASan+UBSan, with servers
#          of the backends whose test.conf says sanitizer_lanes=yes
#          (PostgreSQL; MariaDB's suites are left out)
#   tsan   tests/sanitizers.sh tsan: the threaded suites under TSan, likewise,
#          then the fuzzers (tools/fuzz/run.sh), then the Debian packages
#          (tests/packaging/check.sh: built, lintian, installed on this
#          machine, used, purged; in the main lane when the sanitizers are
#          skipped)
#
# Builds run at a lower priority than tests, so a lane's tests are not
# starved by another lane's compiler; the main build (its tests are the long
# pole) above the sanitizer, fuzzer and package builds. Each lane's output is printed whole
# when it ends, with the time of each stage; any failure fails the run. The
# last line counts the tests of every ctest run: "N passed, N failed, N
# skipped".
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SQLOCK_BUILD_DIR:-$root/build-test}
work=$(mktemp -d /tmp/sqlock-run-all-XXXXXX)
lane_pids=()
# Servers and their companions are started inside the lanes (subshells):
# each one's script and directory go to a file, a tab between them, so that
# this shell can stop them all: the last started first, a companion (which
# talks to the server) before its server.
: >"$work/servers"
cleanup() {
    local pid script dir
    for pid in "${lane_pids[@]}"; do kill -- "$pid" 2>/dev/null || true; done
    while IFS=$'\t' read -r script dir; do
        "$script" stop "$dir" >/dev/null 2>&1 || true
    done < <(tac "$work/servers")
    rm -rf "$work"
}
trap cleanup EXIT

# sqlock_backends, backend_* (what each backend's folder declares)
. "$root/tools/backends.sh"
backend_list=$(sqlock_backends)
mapfile -t backends <<<"$backend_list"

now() { date +%s; }
run_start=$(now)

# stage NAME COMMAND...: runs one stage, prints its time; returns its status.
stage() {
    local name=$1 started status
    shift
    echo
    echo "=== $name ==="
    started=$(now)
    "$@" && status=0 || status=$?
    echo "=== $name: $([[ $status == 0 ]] && echo passed || echo "FAILED ($status)")" \
        "in $(($(now) - started)) s ==="
    printf '%s\t%s\t%s\n' "$name" "$(($(now) - started))" "$status" >>"$work/stages"
    return "$status"
}

# Each throwaway server's password, for the leak check at the end.
: >"$work/passwords"
export SQLOCK_TEST_PASSWORD_LOG="$work/passwords"
# start_server BACKEND [DEFAULTS]: a throwaway server of BACKEND for the
# calling lane, its variables exported (backend_start_server; DEFAULTS
# `hostile`: server-wide defaults a DBA may set, see the backend's server.sh).
# Its password goes to the leak check as the script starts it
# (SQLOCK_TEST_PASSWORD_LOG) and from the URL.
start_server() {
    local backend=$1 defaults=${2:-} dir url_variable userinfo
    dir=$(mktemp -d "/tmp/sqlock-$backend-XXXXXX")
    printf '%s\t%s\n' "$(backend_testing_dir "$backend")/server.sh" "$dir" >>"$work/servers"
    backend_start_server "$backend" "$dir" "$defaults" || return 1
    url_variable=SQLOCK_TEST_$(backend_env "$backend")_URL
    userinfo=${!url_variable#*://}
    userinfo=${userinfo%%@*}
    [[ "$userinfo" == *:* ]] && echo "${userinfo#*:}" >>"$work/passwords"
    return 0
}

# start_companions BACKEND: the scripts its test.conf lists as `companions`
# (PostgreSQL: pgbouncer.sh, one PgBouncer per pool mode, for the
# *.pgbouncer_* ctest entries), each in front of the lane's server:
# `SCRIPT start DIR URL`, then the NAME=VALUE lines of `SCRIPT env DIR`
# exported.
start_companions() {
    local backend=$1 url_variable companion script dir vars line
    local -a companions
    url_variable=SQLOCK_TEST_$(backend_env "$backend")_URL
    read -ra companions <<<"$(backend_test_conf "$backend" companions)"
    for companion in "${companions[@]}"; do
        script=$(backend_testing_dir "$backend")/$companion
        dir=$(mktemp -d "/tmp/sqlock-$backend-${companion%.sh}-XXXXXX")
        printf '%s\t%s\n' "$script" "$dir" >>"$work/servers"
        "$script" start "$dir" "${!url_variable}" || return 1
        vars=$("$script" env "$dir") || return 1
        while IFS= read -r line; do
            [[ -n "$line" ]] && export "$line"
        done <<<"$vars"
    done
    return 0
}

# The servers a lane starts: every server backend in the main lane; in a
# sanitizer lane those whose test.conf says sanitizer_lanes=yes.
lane_servers() {  # main | sanitizer
    local backend
    [[ "${SQLOCK_SQLITE_ONLY:-0}" == 1 ]] && return 0
    for backend in "${backends[@]}"; do
        backend_has_server "$backend" || continue
        [[ $1 == main || $(backend_test_conf "$backend" sanitizer_lanes yes) == yes ]] || continue
        echo "$backend"
    done
}

# A missing optional tool (libfaketime, gdb, ...) fails the tests that need
# it instead of skipping them.
export SQLOCK_TEST_REQUIRE_ALL=1

launcher=()
# -O2 as in a release build; -g1 as in the sanitizer builds: line tables are
# all the watchdog's stacks (gdb) need, and full debug information is a
# quarter of the compile time of the template-heavy tests.
build_main() {
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" "${launcher[@]}" &&
        nice -n 10 cmake --build "$build" -j"$(nproc)"
}

ctest_main() {
    # The watchdog (tests/support/watchdog.sh) ends a hung test after
    # SQLOCK_TEST_TIMEOUT s with the stacks of its processes; ctest's own
    # timeout is only the backstop. Three at a time: most suites spend their
    # time waiting out leases and hand-offs, not on the CPU.
    ctest --test-dir "$build" --output-on-failure -j3 --timeout 900
}

# A smoke run of the benchmark: it must work; its timings fail nothing.
# About 230 s beside the sanitizer lanes; bounded with room for a slow day.
bench_smoke() {
    timeout --kill-after=10 420 "$build/tools/bench/sqlock-bench" --quick
}

lane_main() {
    stage "main: build" build_main || return 1
    local status=0 backend title companions
    for backend in $(lane_servers main); do
        title=$(backend_declared "$backend" TITLE)
        # A backend whose sanitizer lanes run its suites against a stock
        # server may run the main lane's against hostile defaults (its
        # test.conf says): every suite then runs under both, at no cost.
        stage "main: $title server" start_server "$backend" \
            "$(backend_test_conf "$backend" main_lane_defaults)" || return 1
        companions=$(backend_test_conf "$backend" companions)
        if [[ -n "$companions" ]]; then
            stage "main: $title companions ($companions)" start_companions "$backend" || return 1
        fi
    done
    stage "main: tests (ctest)" ctest_main || status=1
    stage "main: benchmark smoke run (sqlock-bench --quick)" bench_smoke || status=1
    if [[ "${SQLOCK_SKIP_SANITIZERS:-0}" == 1 ]]; then packages_stage || status=1; fi
    return $status
}

packages_stage() {
    stage "Debian packages (build, lintian, install, use, purge)" \
        "$root/tests/packaging/check.sh"
}

lane_sanitizer() {  # asan | tsan
    local backend
    for backend in $(lane_servers sanitizer); do
        stage "$1: $(backend_declared "$backend" TITLE) server" start_server "$backend" || return 1
    done
    stage "$1: build and tests" "$root/tests/sanitizers.sh" "$1"
}

lane_tsan_and_fuzz() {
    local status=0
    lane_sanitizer tsan || status=1
    stage "fuzzers (libFuzzer, bounded time per parser)" "$root/tools/fuzz/run.sh" || status=1
    packages_stage || status=1
    return $status
}

stage "install dependencies" "$root/tools/install-deps.sh" --test
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Paths below the checkout hash as relative ones, and the build directory
# not at all: a clone at another path (CI's) reuses what an earlier run
# compiled. Object files of different clones then differ only in the
# directory their debug information names.
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1

lanes=(main)
[[ "${SQLOCK_SKIP_SANITIZERS:-0}" == 1 ]] || lanes+=(asan tsan)
for lane in "${lanes[@]}"; do
    case $lane in
        main) lane_main ;;
        asan) lane_sanitizer asan ;;
        tsan) lane_tsan_and_fuzz ;;
    esac >"$work/$lane.log" 2>&1 &
    lane_pids+=($!)
done

status=0
for i in "${!lanes[@]}"; do
    wait "${lane_pids[$i]}" || status=1
    echo
    echo "################ lane ${lanes[$i]} ################"
    cat "$work/${lanes[$i]}.log"
done
lane_pids=()

# No test output may contain a server's password. LastTest.log holds the
# full output of every test, passed or failed.
# grep reads the files itself: `cat ... | grep -q` under pipefail would read
# a match that ends the pipe early (SIGPIPE to cat) as "no match".
if [[ -s "$work/passwords" ]] &&
        grep -aqsFf "$work/passwords" "$work"/*.log "$build/Testing/Temporary/LastTest.log" \
            "$root"/build-asan/Testing/Temporary/LastTest.log \
            "$root"/build-tsan/Testing/Temporary/LastTest.log; then
    echo "FAIL: a test server's password appeared in the test output" >&2
    status=1
fi

echo
echo "=== stage times (s) ==="
while IFS=$'\t' read -r name seconds code; do
    printf '  %-52s %5s s  %s\n' "$name" "$seconds" "$([[ $code == 0 ]] && echo ok || echo FAILED)"
done <"$work/stages"
echo "  whole run: $(($(now) - run_start)) s"

# The closing count over every ctest run: ctest's "N tests failed out of M"
# lines, and its list of tests that did not run ("(Skipped)"), counted apart
# from those that passed.
passed=0 failed=0 skipped=0
for lane in "${lanes[@]}"; do
    while read -r f t; do
        failed=$((failed + f))
        passed=$((passed + t - f))
    done < <(sed -nE 's/^[0-9]+% tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\1 \2/p' \
        "$work/$lane.log")
    s=$(grep -acE '^[[:space:]]*[0-9]+ - .*\(Skipped\)' "$work/$lane.log" || true)
    skipped=$((skipped + s))
    passed=$((passed - s))
done
echo "=== done: $([[ $status == 0 ]] && echo all stages passed || echo FAILED) ==="
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
