#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine: installs what it needs,
# builds, starts throwaway PostgreSQL and MariaDB servers, runs every test
# against SQLite, PostgreSQL and MariaDB, and checks that the servers'
# passwords appear nowhere in what the tests printed.
#
#   tests/run-all.sh            everything (what CI runs)
#   SQLOCK_SQLITE_ONLY=1 tests/run-all.sh
#                               developer shortcut without PostgreSQL and
#                               MariaDB servers: their suites are reported as
#                               skipped
#   SQLOCK_SKIP_SANITIZERS=1 tests/run-all.sh
#                               developer shortcut: no sanitizer builds and
#                               no fuzzing (CI runs them)
#
# Three lanes run side by side, each with its own PostgreSQL server (suites
# that restart the server must not take another lane's down):
#
#   main   build, ctest (PostgreSQL suites also through PgBouncer in each
#          pool mode, and across a failover to a standby; the MariaDB suites
#          against a MariaDB server of the lane's own), a --quick benchmark
#          smoke run
#   asan   tests/sanitizers.sh asan: every test under ASan+UBSan
#   tsan   tests/sanitizers.sh tsan: the threaded suites under TSan, then the
#          fuzzers (tools/fuzz/run.sh)
#
# Builds run at a lower priority than tests, so a lane's tests are not
# starved by another lane's compiler. Each lane's output is printed whole
# when it ends, with the time of each stage; any failure fails the run. The
# last line counts the tests of every ctest run: "N passed, N failed, N
# skipped".
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SQLOCK_BUILD_DIR:-$root/build-test}
work=$(mktemp -d /tmp/sqlock-run-all-XXXXXX)
lane_pids=()
# Servers are started inside the lanes (subshells): their directories are
# collected in a file so that this shell can stop them all.
: >"$work/pgdirs"
: >"$work/bouncerdirs"
: >"$work/mariadbdirs"
cleanup() {
    local pid dir
    for pid in "${lane_pids[@]}"; do kill -- "$pid" 2>/dev/null || true; done
    while read -r dir; do
        "$root/src/backends/postgres/testing/pgbouncer.sh" stop "$dir" >/dev/null 2>&1 || true
    done <"$work/bouncerdirs"
    while read -r dir; do
        "$root/src/backends/postgres/testing/server.sh" stop "$dir" >/dev/null 2>&1 || true
    done <"$work/pgdirs"
    while read -r dir; do
        "$root/src/backends/mariadb/testing/server.sh" stop "$dir" >/dev/null 2>&1 || true
    done <"$work/mariadbdirs"
    rm -rf "$work"
}
trap cleanup EXIT

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
start_pg_server() {  # exports SQLOCK_TEST_PG_* for the calling lane
    local dir userinfo
    dir=$(mktemp -d /tmp/sqlock-pg-XXXXXX)
    echo "$dir" >>"$work/pgdirs"
    SQLOCK_TEST_PG_URL=$("$root/src/backends/postgres/testing/server.sh" start "$dir")
    export SQLOCK_TEST_PG_URL SQLOCK_TEST_REQUIRE_PG=1
    export SQLOCK_TEST_PG_SCRIPT="$root/src/backends/postgres/testing/server.sh" SQLOCK_TEST_PG_DIR="$dir"
    userinfo=${SQLOCK_TEST_PG_URL#*://}
    userinfo=${userinfo%%@*}
    [[ "$userinfo" == *:* ]] && echo "${userinfo#*:}" >>"$work/passwords"
    return 0
}

# A MariaDB server for the calling lane (src/backends/mariadb/testing/server.sh); exports
# SQLOCK_TEST_MARIADB_*. Its password goes to the leak check as the script
# starts it (SQLOCK_TEST_PASSWORD_LOG) and, like PostgreSQL's, from the URL.
start_mariadb_server() {
    local dir userinfo
    dir=$(mktemp -d /tmp/sqlock-mariadb-XXXXXX)
    echo "$dir" >>"$work/mariadbdirs"
    SQLOCK_TEST_MARIADB_URL=$("$root/src/backends/mariadb/testing/server.sh" start "$dir")
    export SQLOCK_TEST_MARIADB_URL SQLOCK_TEST_REQUIRE_MARIADB=1
    export SQLOCK_TEST_MARIADB_SCRIPT="$root/src/backends/mariadb/testing/server.sh" SQLOCK_TEST_MARIADB_DIR="$dir"
    userinfo=${SQLOCK_TEST_MARIADB_URL#*://}
    userinfo=${userinfo%%@*}
    [[ "$userinfo" == *:* ]] && echo "${userinfo#*:}" >>"$work/passwords"
    return 0
}

# PgBouncer in front of the lane's server, one per pool mode
# (src/backends/postgres/testing/pgbouncer.sh): the *.pgbouncer_* ctest entries run through them.
start_pgbouncers() {
    local dir mode
    dir=$(mktemp -d /tmp/sqlock-pgbouncer-XXXXXX)
    echo "$dir" >>"$work/bouncerdirs"
    "$root/src/backends/postgres/testing/pgbouncer.sh" start "$dir" "$SQLOCK_TEST_PG_URL" || return 1
    for mode in transaction session statement; do
        export "SQLOCK_TEST_PGBOUNCER_${mode^^}_URL=$("$root/src/backends/postgres/testing/pgbouncer.sh" url "$dir" "$mode")"
    done
    export SQLOCK_TEST_REQUIRE_PGBOUNCER=1
}

# A missing optional tool (libfaketime, gdb, ...) fails the tests that need
# it instead of skipping them.
export SQLOCK_TEST_REQUIRE_ALL=1

launcher=()
build_main() {
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" &&
        nice -n 10 cmake --build "$build" -j"$(nproc)"
}

ctest_main() {
    # The watchdog (tests/support/watchdog.sh) ends a hung test after
    # SQLOCK_TEST_TIMEOUT s with the stacks of its processes; ctest's own
    # timeout is only the backstop.
    ctest --test-dir "$build" --output-on-failure -j2 --timeout 900
}

# A smoke run of the benchmark: it must work; its timings fail nothing.
bench_smoke() {
    timeout --kill-after=10 300 "$build/tools/bench/sqlock-bench" --quick
}

lane_main() {
    stage "main: build" build_main || return 1
    local status=0
    if [[ "${SQLOCK_SQLITE_ONLY:-0}" != 1 ]]; then
        stage "main: PostgreSQL server" start_pg_server || return 1
        stage "main: PgBouncer (transaction, session, statement)" start_pgbouncers || return 1
        stage "main: MariaDB server" start_mariadb_server || return 1
    fi
    stage "main: tests (ctest)" ctest_main || status=1
    stage "main: benchmark smoke run (sqlock-bench --quick)" bench_smoke || status=1
    return $status
}

lane_sanitizer() {  # asan | tsan
    [[ "${SQLOCK_SQLITE_ONLY:-0}" == 1 ]] || stage "$1: PostgreSQL server" start_pg_server || return 1
    stage "$1: build and tests" "$root/tests/sanitizers.sh" "$1"
}

lane_tsan_and_fuzz() {
    local status=0
    lane_sanitizer tsan || status=1
    stage "fuzzers (libFuzzer, bounded time per parser)" "$root/tools/fuzz/run.sh" || status=1
    return $status
}

stage "install dependencies" "$root/tools/install-deps.sh" --test
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

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
