#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine: installs what it needs,
# builds, starts a throwaway PostgreSQL server, runs every test against
# SQLite and PostgreSQL, and checks that the server's password appears
# nowhere in what the tests printed.
#
#   tests/run-all.sh            everything (what CI runs)
#   SQLOCK_SQLITE_ONLY=1 tests/run-all.sh
#                               developer shortcut without a PostgreSQL
#                               server: its suites are reported as skipped
#   SQLOCK_SKIP_SANITIZERS=1 tests/run-all.sh
#                               developer shortcut: no sanitizer builds and
#                               no fuzzing (CI runs them)
#
# Stages: build, ctest, a --quick benchmark smoke run, the suite under
# ASan+UBSan and TSan (tests/sanitizers.sh), the fuzzers (tools/fuzz/run.sh),
# then the password check. Every stage runs; any failure fails the run.
set -euo pipefail
set -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SQLOCK_BUILD_DIR:-$root/build-test}
log=$(mktemp /tmp/sqlock-test-log-XXXXXX)
pgdir=""
cleanup() {
    [[ -n "$pgdir" ]] && "$root/tests/pg-server.sh" stop "$pgdir" >/dev/null 2>&1 || true
    rm -f "$log"
}
trap cleanup EXIT

"$root/tools/install-deps.sh" --test

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo 2>&1 | tee -a "$log"
cmake --build "$build" -j"$(nproc)" 2>&1 | tee -a "$log"

password=""
if [[ "${SQLOCK_SQLITE_ONLY:-0}" != 1 ]]; then
    pgdir=$(mktemp -d /tmp/sqlock-pg-XXXXXX)
    SQLOCK_TEST_PG_URL=$("$root/tests/pg-server.sh" start "$pgdir")
    export SQLOCK_TEST_PG_URL SQLOCK_TEST_REQUIRE_PG=1
    export SQLOCK_TEST_PG_SCRIPT="$root/tests/pg-server.sh" SQLOCK_TEST_PG_DIR="$pgdir"
    userinfo=${SQLOCK_TEST_PG_URL#*://}
    userinfo=${userinfo%%@*}
    [[ "$userinfo" == *:* ]] && password=${userinfo#*:}
    # --- PgBouncer in front of the test server, one per pool mode (issue 11,
    # tests/pgbouncer.sh): the *.pgbouncer_* ctest entries run through them.
    bouncerdir=$(mktemp -d /tmp/sqlock-pgbouncer-XXXXXX)
    trap '"$root/tests/pgbouncer.sh" stop "$bouncerdir" >/dev/null 2>&1 || true; cleanup' EXIT
    "$root/tests/pgbouncer.sh" start "$bouncerdir" "$SQLOCK_TEST_PG_URL"
    for mode in transaction session statement; do
        export "SQLOCK_TEST_PGBOUNCER_${mode^^}_URL=$("$root/tests/pgbouncer.sh" url "$bouncerdir" "$mode")"
    done
    export SQLOCK_TEST_REQUIRE_PGBOUNCER=1
    # --- end PgBouncer
fi

status=0
stage() { echo; echo "=== $* ==="; }

stage "tests (ctest)"
ctest --test-dir "$build" --output-on-failure -j2 --timeout 900 2>&1 | tee -a "$log" || status=1

# A smoke run of the benchmark: it must work; its timings fail nothing.
stage "benchmark smoke run (sqlock-bench --quick)"
"$build/tools/bench/sqlock-bench" --quick 2>&1 | tee -a "$log" || status=1

if [[ "${SQLOCK_SKIP_SANITIZERS:-0}" != 1 ]]; then
    stage "sanitizers (ASan+UBSan: all tests; TSan: threaded suites)"
    "$root/tests/sanitizers.sh" 2>&1 | tee -a "$log" || status=1
    stage "fuzzers (libFuzzer, bounded time per parser)"
    "$root/tools/fuzz/run.sh" 2>&1 | tee -a "$log" || status=1
fi

# LastTest.log holds the full output of every test, passed or failed.
if [[ -n "$password" ]] &&
        cat "$log" "$build/Testing/Temporary/LastTest.log" \
            "$root"/build-asan/Testing/Temporary/LastTest.log \
            "$root"/build-tsan/Testing/Temporary/LastTest.log 2>/dev/null |
        grep -aqF -- "$password"; then
    echo "FAIL: the PostgreSQL test password appeared in the test output" >&2
    status=1
fi
stage "done: $([[ $status == 0 ]] && echo all stages passed || echo FAILED)"
# The main suite's count, as the last line: "N passed, N failed".
summary=$(grep -a -m1 -E '^[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$log" || true)
if [[ -n "$summary" ]]; then
    failed=$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/' <<<"$summary")
    total=$(sed -E 's/.* tests failed out of ([0-9]+).*/\1/' <<<"$summary")
    echo "$((total - failed)) passed, $failed failed"
fi
exit $status
