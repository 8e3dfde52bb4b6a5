#!/usr/bin/env bash
# galera_cluster.sh start|stop DIR — the cluster of the Galera suites
# (ctest fixture `galera`, tests/mariadb/CMakeLists.txt): a three-node
# cluster from src/backends/mariadb/testing/galera.sh, started once before
# galera.mariadb and conformance_galera.mariadb and stopped after them.
#
#   start  stops whatever an earlier run left in DIR, starts a fresh
#          cluster there and writes DIR/url (the host list) and
#          DIR/node1.url (node 1 alone), then prints how long it took
#   stop   stops it and removes DIR
#
# Where the cluster cannot be made (no galera-4 or mariadb-server), start
# writes no URL and the suites skip, unless SQLOCK_TEST_REQUIRE_MARIADB=1 (the
# whole run: they fail). SQLOCK_SQLITE_ONLY=1 starts nothing.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
galera=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../src/backends/mariadb/testing" && pwd)/galera.sh
dir=$2

case "$1" in
    start)
        "$galera" stop "$dir" >/dev/null 2>&1 || true
        if [[ "${SQLOCK_SQLITE_ONLY:-0}" == 1 ]]; then
            echo "galera_cluster.sh: SQLOCK_SQLITE_ONLY=1: no cluster"
            exit 0
        fi
        have_server=no
        { command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ]; } && have_server=yes
        if ! [ -e /usr/lib/galera/libgalera_smm.so ] || [ $have_server = no ]; then
            if [[ "${SQLOCK_TEST_REQUIRE_MARIADB:-0}" == 1 ]]; then
                echo "galera_cluster.sh: galera-4 or mariadb-server is missing" >&2
                exit 1
            fi
            echo "galera_cluster.sh: galera-4 or mariadb-server is missing: no cluster"
            exit 0
        fi
        started=$SECONDS
        url=$("$galera" start "$dir")
        (umask 077 && echo "$url" >"$dir/url" && "$galera" url "$dir" 1 >"$dir/node1.url")
        echo "galera_cluster.sh: three nodes Synced in $((SECONDS - started)) s"
        ;;
    stop)
        "$galera" stop "$dir"
        ;;
    *)
        echo "usage: $0 start|stop DIR" >&2
        exit 2
        ;;
esac
