# backends.sh — sourced by tools/install-deps.sh, tests/run-all.sh and
# tests/sanitizers.sh: the backends of the one list SQLOCK_BACKENDS (the
# top-level CMakeLists.txt) and what each one's folder declares, so that
# those scripts name no backend. They run before CMake (installing what it
# needs, starting servers while a lane builds), hence read the files
# themselves.
#
#   sqlock_backends                 the names, one a line, in list order
#   backend_declared NAME KEY       the words after KEY in the folder's
#                                   sqlock_backend_declare() (TITLE,
#                                   BUILD_DEPENDS; cmake/backends.cmake)
#   backend_test_conf NAME KEY [DEFAULT]
#                                   KEY's value in testing/test.conf
#   backend_testing_dir NAME        src/backends/NAME/testing (absolute)
#   backend_has_server NAME         true if the tests need a server
#                                   (testing/server.sh)
#   backend_env NAME                the stem of its test variables
#                                   (SQLOCK_TEST_<stem>_URL, ...): test.conf's
#                                   env, else NAME in capitals
#   backend_start_server NAME DIR [DEFAULTS]
#                                   starts its test server, exports its
#                                   variables (below); DEFAULTS `hostile`: a
#                                   server with hostile defaults
#                                   (SQLOCK_TEST_SERVER_DEFAULTS, server.sh)
#
# The caller sets `set -euo pipefail`.

sqlock_source_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

sqlock_backends() {
    local names
    names=$(sed -nE 's/^[[:space:]]*set\(SQLOCK_BACKENDS[[:space:]]+([^)]*)\).*/\1/p' \
        "$sqlock_source_root/CMakeLists.txt")
    [[ -n "$names" ]] || {
        echo "backends.sh: no set(SQLOCK_BACKENDS ...) in $sqlock_source_root/CMakeLists.txt" >&2
        return 1
    }
    tr -s ' \t' '\n' <<<"$names" | sed '/^$/d'
}

backend_testing_dir() {
    echo "$sqlock_source_root/src/backends/$1/testing"
}

backend_declared() {
    local name=$1 key=$2 call
    # The call may span lines; its arguments hold no parentheses.
    call=$(tr '\n' ' ' <"$sqlock_source_root/src/backends/$name/CMakeLists.txt" |
        sed -nE 's/.*sqlock_backend_declare\(([^)]*)\).*/\1/p')
    [[ -n "$call" ]] || {
        echo "backends.sh: no sqlock_backend_declare() in src/backends/$name/CMakeLists.txt" >&2
        return 1
    }
    # The words after KEY, up to the next keyword (a word in capitals).
    awk -v key="$key" '{
        for (i = 1; i <= NF; i++) {
            if (on && $i ~ /^[A-Z_]+$/) break
            if (on) printf "%s%s", (n++ ? " " : ""), $i
            if ($i == key) on = 1
        }
        print ""
    }' <<<"$call"
}

backend_test_conf() {
    local name=$1 key=$2 default=${3:-} conf line
    conf=$(backend_testing_dir "$name")/test.conf
    [[ -f "$conf" ]] || { echo "backends.sh: $conf is missing" >&2; return 1; }
    line=$(grep -E "^$key=" "$conf" | head -n 1 || true)
    if [[ -n "$line" ]]; then echo "${line#*=}"; else echo "$default"; fi
}

backend_has_server() {
    [[ -x "$(backend_testing_dir "$1")/server.sh" ]]
}

backend_env() {
    backend_test_conf "$1" env "${1^^}"
}

# backend_start_server NAME DIR: starts NAME's throwaway test server in DIR
# (testing/server.sh start DIR prints its URL) and exports what its tests
# read: SQLOCK_TEST_<stem>_URL, SQLOCK_TEST_REQUIRE_<stem>=1 (a missing
# server then fails them), SQLOCK_TEST_<stem>_SCRIPT and _DIR (tests that
# restart it or start servers of their own).
backend_start_server() {
    local name=$1 dir=$2 defaults=${3:-} stem script url
    stem=$(backend_env "$name")
    script=$(backend_testing_dir "$name")/server.sh
    # Checked here: callers run this where set -e does not apply (`f || ...`).
    url=$(SQLOCK_TEST_SERVER_DEFAULTS=$defaults "$script" start "$dir") || return 1
    export "SQLOCK_TEST_${stem}_URL=$url" "SQLOCK_TEST_REQUIRE_${stem}=1"
    export "SQLOCK_TEST_${stem}_SCRIPT=$script" "SQLOCK_TEST_${stem}_DIR=$dir"
}
