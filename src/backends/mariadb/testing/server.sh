#!/bin/bash
# server.sh — a throwaway MariaDB server for sqlock's tests (the MariaDB
# backend's test server: tests/run-all.sh starts one in its main lane).
#
#   server.sh start   DIR   init (if needed) and start; prints the URL
#   server.sh stop    DIR   stop and remove DIR
#   server.sh restart DIR   restart (same port, same URL)
#   server.sh url     DIR   print the URL of the server in DIR
#   server.sh pid     DIR   print the server's process id
#   server.sh halt    DIR   stop the server, keeping its data (`start DIR`
#                           starts it again, same port, same URL): an outage
#   server.sh set     DIR NAME VALUE
#                           a server-wide setting, as root (SET GLOBAL), in
#                           force for new sessions when it returns; VALUE
#                           `DEFAULT` resets it
#
# With SQLOCK_TEST_SERVER_DEFAULTS=hostile, `start` makes a new server whose
# defaults a DBA may have set and sqlock must not depend on: transactions
# SERIALIZABLE, and low statement, lock and idle timeouts (hostile_defaults
# below). A server already made keeps its own.
#
# The MariaDB twin of the PostgreSQL backend's testing/server.sh: idempotent, durability off
# (innodb_flush_log_at_trx_commit=2, innodb_flush_method=nosync, no
# doublewrite), a small buffer pool, `mariadb-admin ping` before reporting
# success. It reads no system option file (/etc/mysql): everything is in
# DIR/my.cnf, so a system MariaDB service, if one runs, is never touched.
# The server runs as the `mysql` user when this script runs as root
# (mariadbd refuses root), listens on a private unix socket DIR/run/mysqld.sock
# and on a free TCP port of 127.0.0.1. Its root account authenticates only
# by unix_socket, as the user running this script, over that private socket;
# over TCP only passwords work, so the URL carries a real password the tests
# can check never leaks:
#
#   mariadb://sqlock_test:PASSWORD@127.0.0.1:PORT/sqlock_test
#
# Accounts and databases created:
#   sqlock_test      what the library needs on databases sqlock_test and ops
#                    (for schema-qualified table tests): CREATE, DROP, ALTER,
#                    INDEX, SELECT, INSERT, UPDATE, DELETE, CREATE ROUTINE,
#                    ALTER ROUTINE, EXECUTE (the guard), plus TRIGGER (tests
#                    watch deletes) and GRANT OPTION (tests grant a table to
#                    sqlock_noaccess, as a PostgreSQL table owner can);
#   sqlock_noaccess  same password, may connect to sqlock_test (as a
#                    PostgreSQL role may connect to a database) but has no
#                    rights on any lock table: for insufficient-privilege
#                    tests. MariaDB admits an account to a database only if
#                    it has some privilege there, so it may read one table,
#                    sqlock_noaccess_door, which is nothing else.
#
# Test environment variables (exported by the runner):
#   SQLOCK_TEST_MARIADB_URL      the URL printed by `start`
#   SQLOCK_TEST_MARIADB_SCRIPT   the absolute path of this script
#   SQLOCK_TEST_MARIADB_DIR      the DIR passed to `start` (holds mariadb.log)
#   SQLOCK_TEST_REQUIRE_MARIADB  1: a missing server fails the tests instead
#                                of skipping them
#   SQLOCK_TEST_PASSWORD_LOG     if set, the password `start` makes is
#                                appended to this file (tests/run-all.sh
#                                checks that none appears in the test output)
#
# Usage, from the top of the tree:
#   s=$PWD/src/backends/mariadb/testing/server.sh
#   d=$(mktemp -d); url=$("$s" start "$d")
#   SQLOCK_TEST_MARIADB_URL=$url SQLOCK_TEST_MARIADB_SCRIPT=$s SQLOCK_TEST_MARIADB_DIR=$d \
#     ctest --test-dir build -R mariadb
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
run="$dir/run"
socket="$run/mysqld.sock"
pid_file="$run/mariadbd.pid"
cnf="$dir/my.cnf"
log="$dir/mariadb.log"
port_file="$dir/port"
password_file="$dir/password"
database=sqlock_test
user=sqlock_test
# Bounds, in seconds, of each wait below.
ready_timeout=60
stop_timeout=60

for tool in mariadbd mariadb-install-db mariadb-admin mariadb; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
        { echo "mariadb server.sh: $tool not found (tools/install-deps.sh --test)" >&2; exit 1; }
done
mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)

# mariadbd refuses to run as root: it switches to `mysql` itself (--user),
# and owns its directories as that user.
server_owner() {
    if [ "$(id -u)" = 0 ]; then echo mysql; else id -un; fi
}
user_option=()
[ "$(id -u)" = 0 ] && user_option=(--user=mysql)

url() {
    [ -f "$port_file" ] && [ -f "$password_file" ] ||
        { echo "mariadb server.sh: no server in $dir (run start first)" >&2; exit 1; }
    echo "mariadb://$user:$(cat "$password_file")@127.0.0.1:$(cat "$port_file")/$database"
}

server_pid() {
    [ -s "$pid_file" ] && cat "$pid_file"
}

# True while process $1 exists and is not a zombie (a server this script
# started and that died stays a zombie until the script ends).
alive() {
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

is_running() {
    local pid
    pid=$(server_pid) || return 1
    alive "$pid"
}

# port_in_use, pick_port: shared by every backend's test scripts.
. "$(dirname "${BASH_SOURCE[0]}")/../../../../tests/support/ports.sh"

admin() {  # mariadb-admin as root over the private socket
    mariadb-admin --defaults-file="$cnf" "$@"
}

sql_admin() {  # the mariadb client as root over the private socket
    mariadb --defaults-file="$cnf" "$@"
}

write_cnf() {
    cat >"$cnf" <<EOF
# mariadb server.sh: a disposable test server. Nothing else is read
# (--defaults-file), so /etc/mysql does not apply.
[mariadbd]
datadir = $data
socket = $socket
pid-file = $pid_file
log-error = $log
port = $1
$(grep -v '^#' "$(dirname "${BASH_SOURCE[0]}")/test-server.cnf")

[client]
socket = $socket
user = root
EOF
    if [ "${SQLOCK_TEST_SERVER_DEFAULTS:-}" = hostile ]; then
        hostile_defaults >>"$cnf"
    fi
}

# What a DBA may set server-wide, as low as stays workable for the tests'
# own sessions: sqlock's sessions set their own isolation, lock wait and
# statement time (mariadb_link.cpp) and survive the rest.
hostile_defaults() {
    cat <<EOF

# mariadb server.sh: hostile defaults (SQLOCK_TEST_SERVER_DEFAULTS=hostile).
[mariadbd]
transaction-isolation = SERIALIZABLE
max_statement_time = 2
innodb_lock_wait_timeout = 1
idle_transaction_timeout = 3
wait_timeout = 3
EOF
}

init_server() {
    mkdir -p "$dir"
    chmod 0755 "$dir"
    mkdir -p "$data" "$run"
    : >"$log"
    chown "$(server_owner)" "$data" "$run" "$log"
    # The socket's directory is the root account's only door.
    chmod 0700 "$data" "$run"
    # A password that is easy to spot in any output it must never appear in.
    local password
    password="sqlockPw$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    (umask 077 && echo "$password" >"$password_file")
    # The runner checks that no password of any server the tests use shows up
    # in their output.
    [ -n "${SQLOCK_TEST_PASSWORD_LOG:-}" ] && echo "$password" >>"$SQLOCK_TEST_PASSWORD_LOG"
    pick_port >"$port_file"
    write_cnf "$(cat "$port_file")"
    mariadb-install-db --defaults-file="$cnf" "${user_option[@]}" --skip-test-db \
        --auth-root-authentication-method=socket --auth-root-socket-user="$(id -un)" \
        >>"$log" 2>&1 ||
        { echo "mariadb server.sh: mariadb-install-db failed; see $log" >&2; return 1; }
}

create_accounts() {
    local password privileges
    password=$(cat "$password_file")
    privileges="CREATE, DROP, ALTER, INDEX, SELECT, INSERT, UPDATE, DELETE, TRIGGER, CREATE ROUTINE, ALTER ROUTINE, EXECUTE"
    sql_admin <<EOF
CREATE DATABASE $database CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE DATABASE ops CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE USER '$user'@'%' IDENTIFIED BY '$password';
CREATE USER 'sqlock_noaccess'@'%' IDENTIFIED BY '$password';
GRANT $privileges ON $database.* TO '$user'@'%' WITH GRANT OPTION;
GRANT $privileges ON ops.* TO '$user'@'%' WITH GRANT OPTION;
CREATE TABLE $database.sqlock_noaccess_door (x int);
GRANT SELECT ON $database.sqlock_noaccess_door TO 'sqlock_noaccess'@'%';
EOF
}

# Starts mariadbd in its own session, detached from our output (a caller
# reading our stdout through $(...) must not wait for the server), and waits
# until it answers or has exited.
start_server() {
    setsid "$mariadbd" --defaults-file="$cnf" "${user_option[@]}" \
        </dev/null >>"$log" 2>&1 &
    local pid=$! deadline=$((SECONDS + ready_timeout))
    until admin --connect-timeout=2 ping >/dev/null 2>&1; do
        if ! alive "$pid"; then
            wait "$pid" 2>/dev/null || true
            return 1
        fi
        if [ $SECONDS -ge $deadline ]; then
            echo "mariadb server.sh: server in $dir not ready after ${ready_timeout}s; see $log" >&2
            kill -KILL "$pid" 2>/dev/null || true
            return 1
        fi
        sleep 0.1
    done
}

start() {
    local fresh=no
    if ! [ -d "$data/mysql" ]; then
        fresh=yes
        # Clean up a half-made server if anything below fails.
        trap 'cleanup_failed_start' EXIT
        init_server
    fi
    if ! is_running; then
        local attempt=0
        until start_server; do
            # The port may have been taken meanwhile: pick another one.
            attempt=$((attempt + 1))
            if [ $attempt -ge 5 ] || ! grep -q "Address already in use" "$log"; then
                echo "mariadb server.sh: MariaDB did not start; last log lines:" >&2
                tail -n 20 "$log" >&2
                return 1
            fi
            pick_port >"$port_file"
            write_cnf "$(cat "$port_file")"
            : >"$log"
        done
    fi
    if [ "$fresh" = yes ]; then
        create_accounts >>"$log" 2>&1 || {
            echo "mariadb server.sh: creating the test accounts failed; see $log" >&2
            return 1
        }
        trap - EXIT
    fi
    url
}

cleanup_failed_start() {
    local rc=$?
    if [ $rc -ne 0 ]; then
        kill_server
        rm -rf "$data" "$run" "$cnf" "$port_file" "$password_file"
    fi
}

kill_server() {
    local pid
    pid=$(server_pid) && kill -KILL "$pid" 2>/dev/null || true
}

# A clean shutdown within stop_timeout seconds, else SIGKILL.
stop_server() {
    local pid deadline=$((SECONDS + stop_timeout))
    pid=$(server_pid) || return 0
    timeout "$stop_timeout" mariadb-admin --defaults-file="$cnf" --connect-timeout=5 \
        shutdown >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
    while alive "$pid"; do
        if [ $SECONDS -ge $deadline ]; then
            echo "mariadb server.sh: server in $dir did not stop in ${stop_timeout}s: killed" >&2
            kill -KILL "$pid" 2>/dev/null || true
            break
        fi
        sleep 0.1
    done
    rm -f "$pid_file"
}

stop() {
    if is_running; then
        stop_server
    fi
    # Only remove what looks like our server's directory.
    if [ -d "$dir" ] && { [ -f "$port_file" ] || [ -d "$data" ] || [ -z "$(ls -A "$dir")" ]; }; then
        rm -rf "$dir"
    fi
}

restart() {
    [ -d "$data/mysql" ] || { echo "mariadb server.sh: no server in $dir" >&2; exit 1; }
    if is_running; then
        stop_server
    fi
    start_server || {
        echo "mariadb server.sh: MariaDB did not restart; last log lines:" >&2
        tail -n 20 "$log" >&2
        return 1
    }
}

halt() {
    [ -d "$data/mysql" ] || { echo "mariadb server.sh: no server in $dir" >&2; exit 1; }
    if is_running; then
        stop_server
    fi
}

# `set NAME VALUE`: the name is checked (an identifier), the value quoted
# unless it is a number or DEFAULT.
set_setting() {
    local name=$1 value=$2
    [[ "$name" =~ ^[a-z_]+$ ]] || { echo "mariadb server.sh: bad setting name: $name" >&2; exit 2; }
    if ! [[ "$value" =~ ^([0-9]+|DEFAULT|ON|OFF)$ ]]; then
        value="'${value//"'"/"''"}'"
    fi
    sql_admin -e "SET GLOBAL $name = $value"
}

case "$cmd" in
    start) start ;;
    halt) halt ;;
    set) set_setting "$setting_name" "$setting_value" ;;
    stop) stop ;;
    restart) restart ;;
    url) url ;;
    pid) server_pid || { echo "mariadb server.sh: no server running in $dir" >&2; exit 1; } ;;
    *) usage ;;
esac
