#!/usr/bin/env bash
# The inner loop's tier: a few minutes, for use while working. It builds the
# library and the test programs it runs (in build-test/, as the whole run
# does, so each reuses the other's objects), starts a throwaway PostgreSQL
# server, and runs the unit tests, the SQLite library suites and
# PostgreSQL's conformance suite. The CLI suites, the other backends, the
# pooler, the fault trials and the sanitizers are left to the whole run,
# tests/run-all.sh, which is what CI runs and what a change is judged by.
#
#   tests/quick.sh                 the tier
#   tests/quick.sh -R queue        ctest's own options are passed on
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SQLOCK_BUILD_DIR:-$root/build-test}

"$root/tools/install-deps.sh" --test

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
# The whole run's flags (tests/run-all.sh), so that the build is shared.
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" "${launcher[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)" --target sqlock_backends unit conformance sqlite_specific \
    reliability reliability_sqlite

server="$root/src/backends/postgres/testing/server.sh"
dir=$(mktemp -d /tmp/sqlock-quick-postgres-XXXXXX)
trap '"$server" stop "$dir" >/dev/null 2>&1 || true' EXIT
SQLOCK_TEST_PG_URL=$("$server" start "$dir")
export SQLOCK_TEST_PG_URL SQLOCK_TEST_PG_SCRIPT=$server SQLOCK_TEST_PG_DIR=$dir
export SQLOCK_TEST_REQUIRE_PG=1

started=$(date +%s)
ctest --test-dir "$build" --output-on-failure -j3 \
    -R '^(unit|conformance\.(sqlite|postgres)|sqlite_specific|reliability\.sqlite|reliability_sqlite)$' \
    "$@"
echo "quick tier: $(($(date +%s) - started)) s of tests"
