#!/bin/bash
# pgbouncer.sh — PgBouncer in front of a throwaway PostgreSQL, for sqlock's tests.
#
#   pgbouncer.sh start DIR PG_URL   one PgBouncer per pool mode, in front
#                                   of the server PG_URL names
#   pgbouncer.sh url   DIR MODE     the URL through the MODE pooler
#                                   (transaction, session or statement)
#   pgbouncer.sh env   DIR          the variables below, one NAME=VALUE a
#                                   line, for the runner to export
#   pgbouncer.sh stop  DIR          stop them all and remove DIR
#
# PG_URL is what server.sh (beside this script) prints:
# postgresql://USER:PASSWORD@HOST:PORT/DB. Each pooler listens on a free TCP
# port of 127.0.0.1 (no unix socket), authenticates clients with
# scram-sha-256 against USER's password (and sqlock_noaccess's and
# sqlock_logged's, which server.sh gives the same one), and logs into the
# server with that password. The database keeps its name, so a URL through a
# pooler differs from the direct one only in its port and in sqlock's own
# `pooler=MODE` parameter, which says which path to take:
#
#   postgresql://sqlock_test:PASSWORD@127.0.0.1:PORT/sqlock_test?pooler=transaction
#
# Test environment variables (printed by `env`, exported by tests/run-all.sh,
# which starts this script as a companion of the PostgreSQL server: see
# test.conf beside it):
#   SQLOCK_TEST_PGBOUNCER_TRANSACTION_URL, SQLOCK_TEST_PGBOUNCER_SESSION_URL,
#   SQLOCK_TEST_PGBOUNCER_STATEMENT_URL   the URLs printed by `url`
#   SQLOCK_TEST_REQUIRE_PGBOUNCER=1       a missing URL fails the pooled suites
#                                         instead of skipping them
#
# PgBouncer will not run as root: as root, it runs as `postgres`.
set -euo pipefail

usage() {
    echo "usage: $0 start DIR PG_URL | url DIR MODE | env DIR | stop DIR" >&2
    exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
case "$dir" in
    /*) ;;
    *) dir="$PWD/$dir" ;;
esac
modes="transaction session statement"

as_bouncer_user() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# port_in_use, pick_port: shared by every backend's test scripts.
. "$(dirname "${BASH_SOURCE[0]}")/../../../../tests/support/ports.sh"

# Server connections per pool: session mode holds one per client for the
# client's whole life, so it needs the most; all stay well below the test
# server's max_connections (400), which the direct suites share.
pool_size() {
    case "$1" in
        session) echo 60 ;;
        transaction) echo 20 ;;
        statement) echo 10 ;;
    esac
}

start_one() {
    local mode=$1 sub="$dir/$1"
    mkdir -p "$sub"
    printf '"%s" "%s"\n' "$user" "$password" "sqlock_noaccess" "$password" \
        "sqlock_logged" "$password" >"$sub/userlist.txt"
    : >"$sub/pgbouncer.log"
    local attempt
    for attempt in 1 2 3 4 5; do
        pick_port >"$sub/port"
        cat >"$sub/pgbouncer.ini" <<EOF
[databases]
$database = host=$host port=$port dbname=$database

[pgbouncer]
pool_mode = $mode
listen_addr = 127.0.0.1
listen_port = $(cat "$sub/port")
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $sub/userlist.txt
logfile = $sub/pgbouncer.log
pidfile = $sub/pgbouncer.pid
max_client_conn = 500
default_pool_size = $(pool_size "$mode")
server_reset_query = DISCARD ALL
ignore_startup_parameters = extra_float_digits
EOF
        chmod 0600 "$sub/userlist.txt"
        chown -R "$(as_bouncer_user id -un)" "$sub"
        if as_bouncer_user pgbouncer -q -d "$sub/pgbouncer.ini" &&
                wait_ready "$(cat "$sub/port")"; then
            return 0
        fi
        grep -q "Address already in use" "$sub/pgbouncer.log" || break
    done
    echo "pgbouncer.sh: PgBouncer ($mode) did not start; last log lines:" >&2
    tail -n 20 "$sub/pgbouncer.log" >&2
    return 1
}

wait_ready() {
    local i
    for i in $(seq 1 100); do
        pg_isready -q -h 127.0.0.1 -p "$1" -d "$database" -U "$user" --timeout=2 && return 0
        sleep 0.1
    done
    return 1
}

start() {
    local url=$1
    # postgresql://USER:PASSWORD@HOST:PORT/DB, as server.sh prints it.
    local re='^postgres(ql)?://([^:@/]+):([^@/]+)@([^:/]+):([0-9]+)/([^?/]+)$'
    [[ "$url" =~ $re ]] ||
        { echo "pgbouncer.sh: expected postgresql://USER:PASSWORD@HOST:PORT/DB" >&2; exit 2; }
    user=${BASH_REMATCH[2]} password=${BASH_REMATCH[3]} host=${BASH_REMATCH[4]}
    port=${BASH_REMATCH[5]} database=${BASH_REMATCH[6]}
    mkdir -p "$dir"
    chmod 0755 "$dir"
    printf '%s\n' "$user" "$password" "$database" >"$dir/login"
    chmod 0600 "$dir/login"
    trap 'stop >/dev/null 2>&1' ERR
    local mode
    for mode in $modes; do start_one "$mode"; done
    trap - ERR
}

url() {
    local mode=$1
    [ -f "$dir/login" ] && [ -f "$dir/$mode/port" ] ||
        { echo "pgbouncer.sh: no $mode pooler in $dir (run start first)" >&2; exit 1; }
    local lines
    mapfile -t lines <"$dir/login"
    echo "postgresql://${lines[0]}:${lines[1]}@127.0.0.1:$(cat "$dir/$mode/port")/${lines[2]}?pooler=$mode"
}

print_env() {
    local mode
    for mode in $modes; do
        echo "SQLOCK_TEST_PGBOUNCER_${mode^^}_URL=$(url "$mode")"
    done
    echo "SQLOCK_TEST_REQUIRE_PGBOUNCER=1"
}

stop() {
    local mode pid i
    for mode in $modes; do
        [ -f "$dir/$mode/pgbouncer.pid" ] || continue
        pid=$(cat "$dir/$mode/pgbouncer.pid")
        # SIGTERM: immediate shutdown. Only a pgbouncer of ours is signalled.
        if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" |
                grep -qF "$dir/$mode/pgbouncer.ini"; then
            kill -TERM "$pid" 2>/dev/null || true
            for i in $(seq 1 100); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.05
            done
        fi
    done
    # Only remove what looks like our directory.
    if [ -d "$dir" ] && { [ -f "$dir/login" ] || [ -z "$(ls -A "$dir")" ]; }; then
        rm -rf "$dir"
    fi
}

case "$cmd" in
    start) [ $# -eq 3 ] || usage; start "$3" ;;
    url) [ $# -eq 3 ] || usage; url "$3" ;;
    env) [ $# -eq 2 ] || usage; print_env ;;
    stop) [ $# -eq 2 ] || usage; stop ;;
    *) usage ;;
esac
