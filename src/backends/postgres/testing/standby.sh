#!/bin/bash
# standby.sh — a streaming standby of a server.sh cluster (beside this
# script), for sqlock's failover tests.
#
#   standby.sh start   DIR PRIMARY_DIR sync|async
#                                   copy the primary with pg_basebackup, start
#                                   the copy as a streaming standby on a free
#                                   port of 127.0.0.1, wait until it streams
#                                   (sync: until the primary counts it as its
#                                   synchronous standby); prints its port
#   standby.sh crash   PRIMARY_DIR immediate|fast
#                                   stop the primary: `immediate` is a crash,
#                                   `fast` a clean shutdown (it sends all WAL
#                                   to the standby before it stops)
#   standby.sh promote DIR          promote the standby (waits until it is)
#   standby.sh stop    DIR          stop it and remove DIR
#
# With sync, the primary gets synchronous_standby_names = 'sqlock_standby'
# and synchronous_commit = on (server.sh turns it off for speed), so a
# commit returns only once the standby has it. With async, the primary gets
# synchronous_commit = on and no synchronous standby.
#
# The standby keeps the primary's password file, roles and databases, so the
# URL differs only in the port; a multi-host URL lists both:
#   postgresql://sqlock_test:PW@127.0.0.1:P1,127.0.0.1:P2/sqlock_test?target_session_attrs=read-write
set -euo pipefail

usage() {
    echo "usage: $0 start DIR PRIMARY_DIR sync|async | crash PRIMARY_DIR immediate|fast |" \
        "promote DIR | stop DIR" >&2
    exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
data="$dir/data"
log="$dir/postgres.log"

bin=""
for candidate in /usr/lib/postgresql/*/bin; do
    [ -x "$candidate/pg_ctl" ] && bin="$candidate"
done
[ -n "$bin" ] || { echo "postgres standby.sh: no PostgreSQL binaries found" >&2; exit 1; }

as_server_user() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# port_in_use, pick_port: shared by every backend's test scripts.
. "$(dirname "${BASH_SOURCE[0]}")/../../../../tests/support/ports.sh"

# psql as superuser over the primary's private socket (trust there).
psql_primary() {
    as_server_user "$bin/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$primary/socket" \
        -p "$(cat "$primary/port")" -U postgres -d postgres "$@"
}

start() {
    local mode=$1
    trap 'echo "postgres standby.sh: start failed; last lines of $log:" >&2; tail -n 20 "$log" >&2' ERR
    [ "$mode" = sync ] || [ "$mode" = async ] || usage
    [ -f "$primary/port" ] || { echo "postgres standby.sh: no cluster in $primary" >&2; exit 1; }
    mkdir -p "$dir/socket"
    chmod 0755 "$dir"
    chmod 0700 "$dir/socket"
    : >"$log"
    chown "$(as_server_user id -un)" "$dir" "$dir/socket" "$log"
    pick_port >"$dir/port"
    if [ "$mode" = sync ]; then
        psql_primary -c "ALTER SYSTEM SET synchronous_standby_names = 'sqlock_standby'"
    else
        psql_primary -c "ALTER SYSTEM SET synchronous_standby_names = ''"
    fi
    psql_primary -c "ALTER SYSTEM SET synchronous_commit = on" -c "SELECT pg_reload_conf()" >/dev/null
    # -R writes standby.signal and primary_conninfo (over the private socket).
    as_server_user "$bin/pg_basebackup" -h "$primary/socket" -p "$(cat "$primary/port")" \
        -U postgres -D "$data" -X stream -R -c fast >>"$log" 2>&1
    cat >>"$data/postgresql.auto.conf" <<EOF
primary_conninfo = 'host=$primary/socket port=$(cat "$primary/port") user=postgres application_name=sqlock_standby'
# Not inherited from the primary: once promoted, this server has no standby
# of its own, and would wait for one forever on every commit.
synchronous_standby_names = ''
EOF
    cat >>"$data/postgresql.conf" <<EOF

# postgres standby.sh: a streaming standby of $primary
port = $(cat "$dir/port")
unix_socket_directories = '$dir/socket'
hot_standby = on
EOF
    # The port may have been taken meanwhile (other servers pick theirs the
    # same way): pick another one.
    local attempt
    for attempt in 1 2 3 4 5; do
        as_server_user "$bin/pg_ctl" start -D "$data" -l "$log" -w -t 60 >/dev/null && break
        grep -q "could not bind\|Address already in use" "$log" && [ "$attempt" -lt 5 ] || return 1
        pick_port >"$dir/port"
        sed -i "s/^port = .*/port = $(cat "$dir/port")/" "$data/postgresql.conf"
    done
    # Streaming (and, with sync, counted as synchronous) before we return.
    local want="streaming $mode"
    for _ in $(seq 1 300); do
        [ "$(psql_primary -c "SELECT state || ' ' || sync_state FROM pg_stat_replication
                WHERE application_name = 'sqlock_standby'")" = "$want" ] &&
            { cat "$dir/port"; return 0; }
        sleep 0.1
    done
    echo "postgres standby.sh: the standby did not start streaming; see $log" >&2
    return 1
}

promote() {
    as_server_user "$bin/pg_ctl" promote -D "$data" -w -t 60 >/dev/null
}

stop() {
    if [ -f "$data/PG_VERSION" ] && as_server_user "$bin/pg_ctl" status -D "$data" >/dev/null 2>&1; then
        as_server_user "$bin/pg_ctl" stop -D "$data" -m immediate -w -t 60 >/dev/null || true
    fi
    if [ -d "$dir" ] && { [ -f "$dir/port" ] || [ -z "$(ls -A "$dir")" ]; }; then
        rm -rf "$dir"
    fi
}

case "$cmd" in
    crash)
        [ $# -eq 3 ] && { [ "$3" = immediate ] || [ "$3" = fast ]; } || usage
        as_server_user "$bin/pg_ctl" stop -D "$dir/data" -m "$3" -w -t 60 >/dev/null ;;
    start) [ $# -eq 4 ] || usage; primary=$3; case "$primary" in /*) ;; *) primary="$PWD/$primary" ;; esac; start "$4" ;;
    promote) [ $# -eq 2 ] || usage; promote ;;
    stop) [ $# -eq 2 ] || usage; stop ;;
    *) usage ;;
esac
