#!/bin/bash
# server.sh — a throwaway PostgreSQL cluster for sqlock's tests (the
# PostgreSQL backend's test server: tests/run-all.sh starts one per lane).
#
#   server.sh start   DIR   init (if needed) and start; prints the URL
#   server.sh stop    DIR   stop and remove DIR
#   server.sh restart DIR   restart (same port, same URL)
#   server.sh url     DIR   print the URL of the cluster in DIR
#   server.sh pid     DIR   print the postmaster's process id (the parent of
#                           every server process)
#   server.sh halt    DIR   stop the server, keeping the cluster (`start DIR`
#                           starts it again, same port, same URL): an outage
#   server.sh set     DIR NAME VALUE
#                           a server-wide setting, as the administrator
#                           (ALTER SYSTEM, then a reload), in force for new
#                           sessions when it returns (and for every session's
#                           next statement); VALUE `DEFAULT` resets it
#
# With SQLOCK_TEST_SERVER_DEFAULTS=hostile, `start` makes a new cluster with
# the server-wide defaults a DBA may have set that sqlock must not depend on:
# transactions SERIALIZABLE by default, and low statement, lock and idle
# timeouts (hostile_defaults below). A cluster already made keeps its own.
#
# Modelled on libpqxx's tools/run-test-postgres.sh: idempotent, fsync off,
# `pg_isready` before reporting success. The server runs as the `postgres`
# user when this script runs as root (PostgreSQL refuses to run as root),
# listens on a private unix socket directory DIR/socket and on a free TCP port
# of 127.0.0.1, and only accepts scram-sha-256 passwords over TCP, so the URL
# carries a real password the tests can check never leaks:
#
#   postgresql://sqlock_test:PASSWORD@127.0.0.1:PORT/sqlock_test
#
# Roles and objects created (all in database sqlock_test):
#   sqlock_test      owns the database (so it may create tables in public) and
#                    the schema `ops` (for schema-qualified table tests);
#   sqlock_noaccess  same password, may connect but create nothing: for
#                    insufficient-privilege tests;
#   sqlock_logged    same password and rights as sqlock_test (member of it),
#                    but every statement it runs is logged to DIR/postgres.log
#                    (log_line_prefix carries application_name), so tests can
#                    count round trips and server-side errors.
#
# Test environment variables (read by tests/postgres, exported by the runner):
#   SQLOCK_TEST_PG_URL      the URL printed by `start`
#   SQLOCK_TEST_PG_SCRIPT   the absolute path of this script (tests restart the
#                           server through it)
#   SQLOCK_TEST_PG_DIR      the DIR passed to `start` (holds postgres.log)
#   SQLOCK_TEST_REQUIRE_PG  1: a missing server fails the tests instead of
#                           skipping them
#   SQLOCK_TEST_PASSWORD_LOG  if set, every password `start` makes is
#                           appended to this file (tests/run-all.sh checks
#                           that none appears in the test output)
#
# Usage, from the top of the tree:
#   s=$PWD/src/backends/postgres/testing/server.sh
#   d=$(mktemp -d); url=$("$s" start "$d")
#   SQLOCK_TEST_PG_URL=$url SQLOCK_TEST_PG_SCRIPT=$s SQLOCK_TEST_PG_DIR=$d \
#     ctest --test-dir build -R postgres
#   "$s" stop "$d"
set -euo pipefail

usage() {
    echo "usage: $0 start|stop|restart|url|pid|halt DIR, or $0 set DIR NAME VALUE" >&2
    exit 2
}

cmd=${1:-}
if [ "$cmd" = set ]; then
    [ $# -eq 4 ] || usage
    setting_name=$3
    setting_value=$4
else
    [ $# -eq 2 ] || usage
fi
dir=$2
[ -n "$dir" ] || usage
case "$dir" in
    /*) ;;
    *) dir="$PWD/$dir" ;;
esac

data="$dir/data"
socket="$dir/socket"
log="$dir/postgres.log"
port_file="$dir/port"
password_file="$dir/password"
database=sqlock_test
role=sqlock_test

find_bin() {
    local candidate
    for candidate in /usr/lib/postgresql/*/bin; do
        [ -x "$candidate/pg_ctl" ] && bin="$candidate"
    done
    if [ -z "${bin:-}" ]; then
        candidate=$(command -v pg_ctl || true)
        [ -n "$candidate" ] && bin=$(dirname "$candidate")
    fi
    [ -n "${bin:-}" ] || { echo "postgres server.sh: no PostgreSQL binaries found" >&2; exit 1; }
}

# PostgreSQL will not run as root: use the postgres account then.
as_server_user() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

server_owner() {
    if [ "$(id -u)" = 0 ]; then echo postgres; else id -un; fi
}

url() {
    [ -f "$port_file" ] && [ -f "$password_file" ] ||
        { echo "postgres server.sh: no cluster in $dir (run start first)" >&2; exit 1; }
    echo "postgresql://$role:$(cat "$password_file")@127.0.0.1:$(cat "$port_file")/$database"
}

is_running() {
    [ -f "$data/PG_VERSION" ] && as_server_user "$bin/pg_ctl" status -D "$data" >/dev/null 2>&1
}

wait_ready() {
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$(cat "$port_file")" -d postgres --timeout=60 ||
        { echo "postgres server.sh: server in $dir did not become ready; see $log" >&2; return 1; }
}

# port_in_use, pick_port: shared by every backend's test scripts.
. "$(dirname "${BASH_SOURCE[0]}")/../../../../tests/support/ports.sh"

psql_admin() {
    # Over the private socket as the superuser: trust authentication there.
    as_server_user "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$socket" -p "$(cat "$port_file")" \
        -U postgres "$@"
}

init_cluster() {
    mkdir -p "$dir"
    chmod 0755 "$dir"
    mkdir -p "$socket"
    : >"$log"
    chown "$(server_owner)" "$dir" "$socket" "$log"
    chmod 0700 "$socket"
    # A password that is easy to spot in any output it must never appear in.
    local password
    password="sqlockPw$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    (umask 077 && echo "$password" >"$password_file")
    # The runner checks that no password of any cluster a test starts (its
    # own, a test's private one, a standby) shows up in the output.
    [ -n "${SQLOCK_TEST_PASSWORD_LOG:-}" ] && echo "$password" >>"$SQLOCK_TEST_PASSWORD_LOG"
    pick_port >"$port_file"
    as_server_user "$bin/initdb" -D "$data" -U postgres -E UTF8 --locale=C.UTF-8 -N \
        --auth-local=trust --auth-host=scram-sha-256 >>"$log" 2>&1
    cat >>"$data/postgresql.conf" <<EOF

# postgres server.sh: a disposable test cluster.
listen_addresses = '127.0.0.1'
port = $(cat "$port_file")
unix_socket_directories = '$socket'
fsync = off
synchronous_commit = off
full_page_writes = off
password_encryption = 'scram-sha-256'
# A waiting process holds one connection (its listener): the crowd test
# queues 256 of them beside the other suites.
max_connections = 400
log_line_prefix = '%m [%p] %q%u@%d app=%a '
EOF
    if [ "${SQLOCK_TEST_SERVER_DEFAULTS:-}" = hostile ]; then
        hostile_defaults >>"$data/postgresql.conf"
    fi
}

# What a DBA may set server-wide, as low as stays workable for the tests'
# own sessions (which set their own values where they must): sqlock's
# sessions override what they must (postgres_session.hpp) and survive the
# rest.
hostile_defaults() {
    cat <<EOF

# postgres server.sh: hostile defaults (SQLOCK_TEST_SERVER_DEFAULTS=hostile).
default_transaction_isolation = 'serializable'
statement_timeout = '2s'
lock_timeout = '200ms'
idle_in_transaction_session_timeout = '3s'
idle_session_timeout = '3s'
EOF
}

create_roles() {
    local password
    password=$(cat "$password_file")
    psql_admin -d postgres <<EOF
CREATE ROLE $role LOGIN PASSWORD '$password';
CREATE ROLE sqlock_noaccess LOGIN PASSWORD '$password';
CREATE ROLE sqlock_logged LOGIN PASSWORD '$password' IN ROLE $role;
ALTER ROLE sqlock_logged SET log_statement = 'all';
CREATE DATABASE $database OWNER $role TEMPLATE template0 ENCODING 'UTF8';
EOF
    psql_admin -d "$database" <<EOF
CREATE SCHEMA ops AUTHORIZATION $role;
EOF
}

start_server() {
    as_server_user "$bin/pg_ctl" start -D "$data" -l "$log" -w -t 60 >/dev/null
}

start() {
    local fresh=no
    if ! [ -f "$data/PG_VERSION" ]; then
        fresh=yes
        # Clean up a half-made cluster if anything below fails.
        trap 'cleanup_failed_start' EXIT
        init_cluster
    fi
    if ! is_running; then
        local attempt=0
        until start_server; do
            # The port may have been taken meanwhile: pick another one.
            attempt=$((attempt + 1))
            if [ $attempt -ge 5 ] || ! grep -q "could not bind\|Address already in use" "$log"; then
                echo "postgres server.sh: PostgreSQL did not start; last log lines:" >&2
                tail -n 20 "$log" >&2
                return 1
            fi
            local port
            port=$(pick_port)
            echo "$port" >"$port_file"
            sed -i "s/^port = .*/port = $port/" "$data/postgresql.conf"
        done
    fi
    wait_ready
    if [ "$fresh" = yes ]; then
        create_roles >>"$log" 2>&1 || {
            echo "postgres server.sh: creating the test roles failed; see $log" >&2
            return 1
        }
        trap - EXIT
    fi
    url
}

cleanup_failed_start() {
    local rc=$?
    if [ $rc -ne 0 ]; then
        as_server_user "$bin/pg_ctl" stop -D "$data" -m immediate >/dev/null 2>&1 || true
        rm -rf "$data" "$socket" "$port_file" "$password_file"
    fi
}

stop() {
    if is_running; then
        as_server_user "$bin/pg_ctl" stop -D "$data" -m fast -w -t 60 >/dev/null
    fi
    # Only remove what looks like our cluster directory.
    if [ -d "$dir" ] && { [ -f "$port_file" ] || [ -d "$data" ] || [ -z "$(ls -A "$dir")" ]; }; then
        rm -rf "$dir"
    fi
}

# The first line of postmaster.pid, which PostgreSQL keeps while it runs.
postmaster_pid() {
    local pid
    pid=$(head -n 1 "$data/postmaster.pid" 2>/dev/null) && [ -n "$pid" ] ||
        { echo "postgres server.sh: no server running in $dir" >&2; exit 1; }
    echo "$pid"
}

restart() {
    [ -f "$data/PG_VERSION" ] || { echo "postgres server.sh: no cluster in $dir" >&2; exit 1; }
    if is_running; then
        as_server_user "$bin/pg_ctl" restart -D "$data" -l "$log" -m fast -w -t 60 >/dev/null
    else
        start_server
    fi
    wait_ready
}

halt() {
    [ -f "$data/PG_VERSION" ] || { echo "postgres server.sh: no cluster in $dir" >&2; exit 1; }
    if is_running; then
        as_server_user "$bin/pg_ctl" stop -D "$data" -m fast -w -t 60 >/dev/null
    fi
}

# `set NAME VALUE`: the name is checked (an identifier), the value quoted.
set_setting() {
    local name=$1 value=$2 from_auto=t attempt
    [[ "$name" =~ ^[a-z_]+$ ]] || { echo "postgres server.sh: bad setting name: $name" >&2; exit 2; }
    if [ "$value" = DEFAULT ]; then
        from_auto=f
        psql_admin -d postgres -c "ALTER SYSTEM RESET $name"
    else
        local quoted=${value//"'"/"''"}
        psql_admin -d postgres -c "ALTER SYSTEM SET $name = '$quoted'"
    fi
    psql_admin -d postgres -c "SELECT pg_reload_conf()" >/dev/null
    # The reload is signalled, not awaited: a new session shows when the
    # postmaster has read it (postgresql.auto.conf holds ALTER SYSTEM's).
    for attempt in $(seq 200); do
        [ "$(psql_admin -d postgres -At -c "SELECT coalesce(sourcefile LIKE '%postgresql.auto.conf', false) FROM pg_settings WHERE name = '$name'")" = "$from_auto" ] && return 0
        sleep 0.05
    done
    echo "postgres server.sh: setting $name did not take effect" >&2
    return 1
}

find_bin
case "$cmd" in
    start) start ;;
    stop) stop ;;
    restart) restart ;;
    url) url ;;
    pid) postmaster_pid ;;
    halt) halt ;;
    set) set_setting "$setting_name" "$setting_value" ;;
    *) usage ;;
esac
