#!/usr/bin/env bash
# The test suite under sanitizers:
#   asan  AddressSanitizer + UndefinedBehaviorSanitizer (also catches leaks):
#         every test, in build-asan, except the CLI suites (cli and
#         cli_history: each start of the sanitized command costs about a
#         quarter of a second, and cli.sqlite took 320-803 s beside the other
#         lanes, starving the lane's PostgreSQL connections into 10 s connect
#         timeouts; reliability_cli.sqlite still runs the command's bad-input
#         and password-scrubbing paths, the fuzzers its parsers, and the
#         server backends' code runs in their library suites), the
#         consumer test (a packaging
#         check), the runs through PgBouncer (the same code as the direct
#         PostgreSQL runs: no pooler is started for this stage) and the
#         fencing trials (their margins are real-time bounds that a 2-10x
#         slower sanitized build on a loaded machine does not keep; the plain
#         run holds them) and the MariaDB runs (no MariaDB server is started
#         here; the backend's code is exercised by the plain run's
#         *.mariadb suites: the backends whose testing/test.conf says
#         sanitizer_lanes=no)
#   tsan  ThreadSanitizer: every suite that starts threads (conformance,
#         reliability, the PostgreSQL suites, sqlite_specific), in build-tsan;
#         the CLI suites are left out: the sqlock command has no threads of
#         its own beyond the library's, which the suites above exercise; so
#         are the MariaDB runs, as under asan
#
#   tests/sanitizers.sh            both (what CI runs)
#   tests/sanitizers.sh asan|tsan  one of them
#
# Starts a throwaway server (its testing/server.sh) for each server backend
# with sanitizer_lanes=yes (PostgreSQL) whose URL variable is not already
# set (SQLOCK_SQLITE_ONLY=1: none, their suites are skipped). The stress
# tests are scaled down to fit CI's time on two cores; any sanitizer report
# fails the test that triggered it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
modes=("$@")
[[ ${#modes[@]} -gt 0 ]] || modes=(asan tsan)
jobs=${SQLOCK_JOBS:-2}

# sqlock_backends, backend_* (what each backend's folder declares)
. "$root/tools/backends.sh"
backend_list=$(sqlock_backends)
mapfile -t backends <<<"$backend_list"

# The servers this script started, a tab between script and directory.
servers=()
cleanup() {
    local entry
    for entry in "${servers[@]}"; do
        "${entry%%$'\t'*}" stop "${entry#*$'\t'}" >/dev/null 2>&1 || true
    done
}
trap cleanup EXIT
# The runs left out: those of the backends without sanitizer_lanes (a ctest
# regular expression, `\.mariadb$`).
skipped_backends=""
# Under ASan no CLI suite but reliability_cli on the embedded backends
# (see the top of this file): the sqlock command's own code is the same on
# every backend, and each CLI test starts it dozens of times, which is the
# costliest part of the lane. The availability suite is one (sqlock run in
# crowds and through outages): the library's wait through them is in the
# restarts of reliability_pg_faults here.
cli_runs_left_out="|^cli(_history)?\\.|^availability\\."
for backend in "${backends[@]}"; do
    if [[ $(backend_test_conf "$backend" sanitizer_lanes yes) != yes ]]; then
        skipped_backends+="|\\.$backend\$"
        continue
    fi
    backend_has_server "$backend" || continue
    cli_runs_left_out+="|^reliability_cli\\.$backend\$"
    url_variable=SQLOCK_TEST_$(backend_env "$backend")_URL
    if [[ -z "${!url_variable:-}" && "${SQLOCK_SQLITE_ONLY:-0}" != 1 ]]; then
        dir=$(mktemp -d "/tmp/sqlock-$backend-XXXXXX")
        servers+=("$(backend_testing_dir "$backend")/server.sh"$'\t'"$dir")
        backend_start_server "$backend" "$dir"
    fi
done

# Less load than the plain run: sanitized code is 2-10x slower, and the
# repetitions find nothing more under a sanitizer than in the plain run.
export SQLOCK_STRESS_ROUNDS=${SQLOCK_STRESS_ROUNDS:-60}
export SQLOCK_KILLS=${SQLOCK_KILLS:-100}
# More time for them: under ThreadSanitizer, beside the other lanes, 60 s
# made 283-363 stress attempts and 20 s 31 kills.
export SQLOCK_STRESS_SECONDS=${SQLOCK_STRESS_SECONDS:-90}
export SQLOCK_KILL_SECONDS=${SQLOCK_KILL_SECONDS:-40}
# The watchdog's limit per test binary (tests/support/watchdog.sh).
export SQLOCK_TEST_TIMEOUT=${SQLOCK_TEST_TIMEOUT:-840}

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# -g1: line tables are all a report's stack needs. ThreadSanitizer at -O1,
# its own advice (at -O0 every local is a memory access it instruments),
# for the library and the command; the tests' own code is -O0 in every
# build (tests/CMakeLists.txt): it waits, and its accesses are few.
# AddressSanitizer + UBSan at -O0: UBSan's checks made -O1 code generation
# three times as long (locker.cpp: 19.6 s of CPU against 5.7 s under ASan
# alone and 6.1 s at -O0 with both), the larger part of a cold run's long
# pole, and every check is made at any level.
configure() {  # build-dir sanitizers optimisation
    cmake -S "$root" -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSQLOCK_SANITIZE="$2" \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$3 -g1 -DNDEBUG" \
        -DSQLOCK_BUILD_TESTS=ON -DSQLOCK_BUILD_TOOLS=ON -DSQLOCK_BUILD_BENCH=OFF "${launcher[@]}" >"$1.log" 2>&1 ||
        { cat "$1.log" >&2; return 1; }
}

# The builds at the lowest priority: beside the whole run's main build
# (nice 10), whose tests are its long pole, they take what that build and
# every lane's tests leave.
status=0
for mode in "${modes[@]}"; do
    case "$mode" in
        asan)
            build=$root/build-asan
            configure "$build" address,undefined -O0
            # The programs of the tests run below, not those of the tests
            # left out (cli, fencing and fault_relay, pooler_tests, patroni_tests): a test whose
            # program is missing from this list fails, it is not skipped.
            nice -n 19 cmake --build "$build" -j"$jobs" --target unit conformance sqlite_specific \
                postgres_tests failover_tests cli_run_outcome cli_docs sqlite_guard reliability reliability_helper \
                reliability_sqlite reliability_pg_faults reliability_cli
            echo "== AddressSanitizer + UndefinedBehaviorSanitizer: all tests"
            LSAN_OPTIONS=suppressions=$root/tests/lsan.supp \
            ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
                ctest --test-dir "$build" --output-on-failure -j"$jobs" --timeout 900 -E "^consumer|pgbouncer|^fencing|^cli_crowd|patroni$skipped_backends$cli_runs_left_out" ||
                status=1
            ;;
        tsan)
            build=$root/build-tsan
            configure "$build" thread -O1
            nice -n 19 cmake --build "$build" -j"$jobs" --target conformance reliability \
                reliability_helper reliability_pg_faults postgres_tests sqlite_specific
            echo "== ThreadSanitizer: the suites with threads"
            # die_after_fork=0: tests fork+exec the sqlock command from
            # threaded processes (the child only execs; children that run
            # code are forked before any thread exists).
            export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0
            ctest --test-dir "$build" --output-on-failure -j"$jobs" --timeout 900 \
                -R '^(reliability\.|reliability_pg_faults|conformance\.|postgres|sqlite_specific)' \
                -E "pgbouncer|failover|patroni$skipped_backends" ||
                status=1
            ;;
        *)
            echo "usage: $0 [asan] [tsan]" >&2
            exit 2
            ;;
    esac
done
exit $status
