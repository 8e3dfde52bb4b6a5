#!/bin/bash
# galera.sh — a throwaway three-node Galera cluster for sqlock's tests, on
# 127.0.0.1, from Debian's mariadb-server and galera-4 (the Galera suite,
# tests/galera/, starts one per run).
#
#   galera.sh start   DIR      init (if needed) and start all three nodes, await
#                              Synced on each; prints the host-list URL
#   galera.sh stop    DIR      kill every node and remove DIR
#   galera.sh url     DIR [N]  the host-list URL, or node N's alone (1..3)
#   galera.sh pid     DIR N    node N's server process id
#   galera.sh kill    DIR N    SIGKILL node N (it stays down)
#   galera.sh revive  DIR N    start node N again (it rejoins: IST, else rsync
#                              SST) and await Synced
#   galera.sh isolate DIR N on|off
#                              cut node N from the other two (gmcast.isolate:
#                              Galera closes its links to them and refuses
#                              theirs) and wait until it is outside the
#                              primary component, or join it back and await
#                              Synced
#   galera.sh state   DIR N    node N's wsrep_local_state_comment, cluster
#                              status and size ("Synced Primary 3"), or "down"
#
# The cluster twin of server.sh beside it, with its conventions: idempotent
# start and stop, everything in DIR/nodeN/my.cnf (no system option file),
# durability off, the server as the `mysql` user when this runs as root
# (mariadbd refuses root), a private unix socket per node for the root
# account and a free TCP port of 127.0.0.1 (tests/support/ports.sh) for
# clients, Galera's group port, IST port and rsync SST port. `stop` kills
# every node, also after a failed start. The accounts and databases are
# server.sh's (sqlock_test, sqlock_noaccess; databases sqlock_test and ops),
# created once on the first node and replicated:
#
#   mariadb://sqlock_test:PASSWORD@127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3/sqlock_test
#
# Galera's failure detection is shortened so a test waits seconds, not
# tens of them, for the cluster to drop a node that stopped answering:
# evs.suspect_timeout 2 s, inactive_timeout 3 s (see docs/mariadb.md, "Galera
# multi-primary", for what production uses).
#
# Test environment variables (exported by the tests that start it):
#   SQLOCK_TEST_PASSWORD_LOG     if set, the password `start` makes is
#                                appended to it (the runner's leak check)
set -euo pipefail

usage() {
    echo "usage: $0 start|stop DIR | url DIR [N] | pid|kill|revive|state DIR N | isolate DIR N on|off" >&2
    exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
[ -n "$dir" ] || usage
case "$dir" in
    /*) ;;
    *) dir="$PWD/$dir" ;;
esac
node=${3:-}
nodes=(1 2 3)

password_file="$dir/password"
database=sqlock_test
user=sqlock_test
# Bounds, in seconds, of each wait below.
ready_timeout=120

for tool in mariadbd mariadb-install-db mariadb-admin mariadb rsync; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
        { echo "galera.sh: $tool not found (tools/install-deps.sh --test)" >&2; exit 1; }
done
provider=/usr/lib/galera/libgalera_smm.so
[ -e "$provider" ] || { echo "galera.sh: $provider not found (galera-4)" >&2; exit 1; }
mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)

server_owner() {
    if [ "$(id -u)" = 0 ]; then echo mysql; else id -un; fi
}
user_option=()
[ "$(id -u)" = 0 ] && user_option=(--user=mysql)

# port_in_use, pick_port: shared by every backend's test scripts.
. "$(dirname "${BASH_SOURCE[0]}")/../../../../tests/support/ports.sh"

# Node N's files.
node_dir() { echo "$dir/node$1"; }
cnf() { echo "$(node_dir "$1")/my.cnf"; }
pid_file() { echo "$(node_dir "$1")/run/mariadbd.pid"; }
log() { echo "$(node_dir "$1")/mariadb.log"; }
# ports: client, group (gcomm), IST, SST; one line per node.
port_of() {  # N KIND
    local kind=$2 line
    line=$(sed -n "${1}p" "$dir/ports")
    case $kind in
        client) echo "$line" | cut -d' ' -f1 ;;
        group) echo "$line" | cut -d' ' -f2 ;;
        ist) echo "$line" | cut -d' ' -f3 ;;
        sst) echo "$line" | cut -d' ' -f4 ;;
    esac
}

check_node() {
    case "$1" in 1 | 2 | 3) ;; *) usage ;; esac
}

alive() {
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

server_pid() {
    local f
    f=$(pid_file "$1")
    [ -s "$f" ] && cat "$f"
}

is_running() {
    local pid
    pid=$(server_pid "$1") || return 1
    alive "$pid"
}

admin() {  # N args...: mariadb-admin as root over node N's socket
    local n=$1
    shift
    mariadb-admin --defaults-file="$(cnf "$n")" "$@"
}

sql_admin() {  # N args...: the mariadb client as root over node N's socket
    local n=$1
    shift
    mariadb --defaults-file="$(cnf "$n")" "$@"
}

url() {
    [ -f "$dir/ports" ] && [ -f "$password_file" ] ||
        { echo "galera.sh: no cluster in $dir (run start first)" >&2; exit 1; }
    local hosts="" n
    if [ -n "${1:-}" ]; then
        hosts="127.0.0.1:$(port_of "$1" client)"
    else
        for n in "${nodes[@]}"; do hosts="$hosts${hosts:+,}127.0.0.1:$(port_of "$n" client)"; done
    fi
    echo "mariadb://$user:$(cat "$password_file")@$hosts/$database"
}

# A free port below the kernel's range for outgoing connections
# (ip_local_port_range): the nodes' own connections to each other, made
# while the next node starts, take their source ports from there, and one
# could otherwise take a port picked for a node before it binds it. Not one
# of "$@".
pick_node_port() {
    local low=32768 port tries
    read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
    [ "$low" -gt 21000 ] || low=60999
    for tries in $(seq 1 200); do
        port=$((20000 + RANDOM % (low - 20000)))
        [[ " $* " == *" $port "* ]] && continue
        port_in_use "$port" || { echo "$port"; return 0; }
    done
    echo "galera.sh: no free TCP port below $low" >&2
    return 1
}

# Four ports for each node (client, group, IST, SST), one line each.
pick_ports() {
    local picked=() n
    while [ ${#picked[@]} -lt 12 ]; do picked+=("$(pick_node_port "${picked[@]}")"); done
    : >"$dir/ports"
    for n in 0 1 2; do
        echo "${picked[$((n * 4))]} ${picked[$((n * 4 + 1))]} ${picked[$((n * 4 + 2))]} ${picked[$((n * 4 + 3))]}" >>"$dir/ports"
    done
}

# New ports for node N (one was taken before it could bind it), and every
# node's my.cnf written again with them (the others' list of the group's
# addresses names N's).
repick_ports() {  # N
    local n=$1 m line others
    others=$(tr '\n' ' ' <"$dir/ports")
    line="$(pick_node_port $others)"
    while [ "$(echo "$line" | wc -w)" -lt 4 ]; do line="$line $(pick_node_port $others $line)"; done
    sed -i "${n}s/.*/$line/" "$dir/ports"
    for m in "${nodes[@]}"; do write_cnf "$m"; done
}

write_cnf() {  # N
    local n=$1 d addresses="" m
    d=$(node_dir "$n")
    for m in "${nodes[@]}"; do addresses="$addresses${addresses:+,}127.0.0.1:$(port_of "$m" group)"; done
    cat >"$(cnf "$n")" <<EOF
# galera.sh: node $n of a disposable test cluster. Nothing else is read
# (--defaults-file), so /etc/mysql does not apply.
[mariadbd]
datadir = $d/data
socket = $d/run/mysqld.sock
pid-file = $(pid_file "$n")
log-error = $(log "$n")
port = $(port_of "$n" client)
$(grep -v '^#' "$(dirname "${BASH_SOURCE[0]}")/test-server.cnf")
# What Galera needs.
binlog_format = ROW
default_storage_engine = InnoDB
innodb_autoinc_lock_mode = 2
wsrep_on = ON
wsrep_provider = $provider
wsrep_cluster_name = sqlock_test
wsrep_cluster_address = gcomm://$addresses
wsrep_node_name = node$n
wsrep_node_address = 127.0.0.1:$(port_of "$n" group)
wsrep_sst_method = rsync
wsrep_sst_receive_address = 127.0.0.1:$(port_of "$n" sst)
wsrep_slave_threads = 2
# Galera logs like a binary log: creating a trigger (the suites watch
# deletes with one) would need SUPER otherwise.
log_bin_trust_function_creators = 1
wsrep_provider_options = "base_port=$(port_of "$n" group);gmcast.listen_addr=tcp://127.0.0.1:$(port_of "$n" group);ist.recv_addr=127.0.0.1:$(port_of "$n" ist);gcache.size=64M;evs.keepalive_period=PT0.5S;evs.inactive_check_period=PT0.5S;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT3S;evs.install_timeout=PT3S;pc.wait_prim_timeout=PT30S"

[client]
socket = $d/run/mysqld.sock
user = root
EOF
}

init_node() {  # N
    local n=$1 d
    d=$(node_dir "$n")
    mkdir -p "$d/data" "$d/run"
    chmod 0755 "$d"
    : >"$(log "$n")"
    chown "$(server_owner)" "$d" "$d/data" "$d/run" "$(log "$n")"
    chmod 0700 "$d/data" "$d/run"
    write_cnf "$n"
    mariadb-install-db --defaults-file="$(cnf "$n")" "${user_option[@]}" --skip-test-db \
        --auth-root-authentication-method=socket --auth-root-socket-user="$(id -un)" \
        >>"$(log "$n")" 2>&1 ||
        { echo "galera.sh: mariadb-install-db failed for node $n; see $(log "$n")" >&2; return 1; }
}

init_cluster() {
    mkdir -p "$dir"
    chmod 0755 "$dir"
    local password n
    password="sqlockPw$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    (umask 077 && echo "$password" >"$password_file")
    [ -n "${SQLOCK_TEST_PASSWORD_LOG:-}" ] && echo "$password" >>"$SQLOCK_TEST_PASSWORD_LOG"
    pick_ports
    for n in "${nodes[@]}"; do init_node "$n"; done
}

# "Synced Primary 3" (its state, the component's, how many nodes are in
# it), "Initialized non-Primary 1", ..., or "down" when node N does not
# answer.
node_state() {  # N
    local out
    out=$(sql_admin "$1" --connect-timeout=2 -N -B -e \
        "SELECT MAX(IF(VARIABLE_NAME = 'WSREP_LOCAL_STATE_COMMENT', VARIABLE_VALUE, NULL)),
                MAX(IF(VARIABLE_NAME = 'WSREP_CLUSTER_STATUS', VARIABLE_VALUE, NULL)),
                MAX(IF(VARIABLE_NAME = 'WSREP_CLUSTER_SIZE', VARIABLE_VALUE, NULL))
           FROM information_schema.GLOBAL_STATUS" 2>/dev/null) || { echo down; return 0; }
    echo "$out" | tr '\t' ' '
}

# How many nodes' servers are running.
running_nodes() {
    local n count=0
    for n in "${nodes[@]}"; do is_running "$n" && count=$((count + 1)); done
    echo $count
}

# Node N's view of the cluster (wsrep_cluster_conf_id), or "" when it does
# not answer.
node_view() {  # N
    sql_admin "$1" --connect-timeout=2 -N -B -e \
        "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
          WHERE VARIABLE_NAME = 'WSREP_CLUSTER_CONF_ID'" 2>/dev/null || true
}

# Whether node N is Synced in a primary component of every running node,
# and in the same view of it as the others: a node back from a pause says
# Synced, in its old view, until it notices it was left behind.
in_step() {  # N
    local n=$1 m view
    [ "$(node_state "$n")" = "Synced Primary $(running_nodes)" ] || return 1
    view=$(node_view "$n")
    for m in "${nodes[@]}"; do
        [ "$m" = "$n" ] && continue
        is_running "$m" || continue
        [ "$(node_view "$m")" = "$view" ] || return 1
    done
}

# Waits until node N is in step (in_step), or its server exited, or
# ready_timeout passed.
await_synced() {  # N PID
    local n=$1 pid=$2 deadline=$((SECONDS + ready_timeout))
    until in_step "$n"; do
        if ! alive "$pid"; then
            wait "$pid" 2>/dev/null || true
            echo "galera.sh: node $n exited while starting; last log lines:" >&2
            tail -n 20 "$(log "$n")" >&2
            return 1
        fi
        if [ $SECONDS -ge $deadline ]; then
            echo "galera.sh: node $n not Synced after ${ready_timeout}s ($(node_state "$n")); see $(log "$n")" >&2
            return 1
        fi
        sleep 0.1
    done
}

# Starts node N and waits until it is Synced; a port of it taken meanwhile
# (its log says so): new ports, and again, five times at most.
start_node() {  # N [--wsrep-new-cluster]
    local n=$1 attempt pid
    shift
    local since
    for attempt in 1 2 3 4 5; do
        since=$(($(stat -c %s "$(log "$n")" 2>/dev/null || echo 0) + 1))
        setsid "$mariadbd" --defaults-file="$(cnf "$n")" "${user_option[@]}" "$@" \
            </dev/null >>"$(log "$n")" 2>&1 &
        pid=$!
        if ! await_synced "$n" $pid 2>"$dir/start-error"; then
            kill -KILL "$pid" 2>/dev/null || true
            if ! tail -c +"$since" "$(log "$n")" | grep -q "Address already in use"; then
                cat "$dir/start-error" >&2
                return 1
            fi
            echo "galera.sh: a port of node $n was taken before it bound it: new ports" >>"$(log "$n")"
            repick_ports "$n"
            continue
        fi
        return 0
    done
    echo "galera.sh: node $n found no free ports in five tries; see $(log "$n")" >&2
    return 1
}

create_accounts() {
    local password privileges
    password=$(cat "$password_file")
    privileges="CREATE, DROP, ALTER, INDEX, SELECT, INSERT, UPDATE, DELETE, TRIGGER, CREATE ROUTINE, ALTER ROUTINE, EXECUTE"
    sql_admin 1 <<EOF
CREATE DATABASE IF NOT EXISTS $database CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE DATABASE IF NOT EXISTS ops CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE USER IF NOT EXISTS '$user'@'%' IDENTIFIED BY '$password';
CREATE USER IF NOT EXISTS 'sqlock_noaccess'@'%' IDENTIFIED BY '$password';
GRANT $privileges ON $database.* TO '$user'@'%' WITH GRANT OPTION;
GRANT $privileges ON ops.* TO '$user'@'%' WITH GRANT OPTION;
CREATE TABLE IF NOT EXISTS $database.sqlock_noaccess_door (x int PRIMARY KEY);
GRANT SELECT ON $database.sqlock_noaccess_door TO 'sqlock_noaccess'@'%';
EOF
}

start() {
    local fresh=no n
    if ! [ -f "$dir/ports" ]; then
        fresh=yes
        trap 'cleanup_failed_start' EXIT
        init_cluster
    fi
    # The first node bootstraps a new cluster when none of them runs (its
    # data is the newest: the nodes were stopped together).
    local running=no
    for n in "${nodes[@]}"; do is_running "$n" && running=yes; done
    for n in "${nodes[@]}"; do
        is_running "$n" && continue
        if [ $running = no ]; then
            start_node "$n" --wsrep-new-cluster || return 1
            running=yes
            if [ "$fresh" = yes ]; then
                create_accounts >>"$(log 1)" 2>&1 || {
                    echo "galera.sh: creating the test accounts failed; see $(log 1)" >&2
                    return 1
                }
            fi
        else
            start_node "$n" || return 1
        fi
    done
    [ "$fresh" = yes ] && trap - EXIT
    url
}

cleanup_failed_start() {
    local rc=$?
    if [ $rc -ne 0 ]; then
        kill_all
        rm -rf "$dir"
    fi
}

kill_node() {  # N
    local pid
    pid=$(server_pid "$1") || return 0
    kill -CONT "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
    while alive "$pid"; do sleep 0.05; done
    rm -f "$(pid_file "$1")"
}

kill_all() {
    local n
    for n in "${nodes[@]}"; do kill_node "$n"; done
    # The rsync daemons of an SST under way, and anything else a node left.
    pkill_owned
}

# Kills the processes still holding a file under DIR open (an SST's rsync
# daemon, a script of a dead server): by their process ids, found through
# /proc, never by name.
pkill_owned() {
    local p
    for p in /proc/[0-9]*; do
        if ls -l "$p/cwd" "$p/fd" 2>/dev/null | grep -qF " $dir/"; then
            kill -KILL "${p#/proc/}" 2>/dev/null || true
        fi
    done
}

# Nothing of DIR is kept, so no clean shutdown is waited for: every node
# killed (resumed first, should one be paused), whatever an SST left too.
stop() {
    [ -f "$dir/ports" ] && kill_all
    if [ -d "$dir" ] && { [ -f "$dir/ports" ] || [ -z "$(ls -A "$dir")" ]; }; then
        rm -rf "$dir"
    fi
}

revive() {  # N
    local n=$1
    is_running "$n" && { await_synced "$n" "$(server_pid "$n")"; return; }
    start_node "$n"
}

isolate() {  # N on|off
    local n=$1 value
    case "$2" in on) value=1 ;; off) value=0 ;; *) usage ;; esac
    sql_admin "$n" -e "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=$value'"
    if [ $value = 0 ]; then
        await_synced "$n" "$(server_pid "$n")"
        return
    fi
    # Cut off: once it sees itself outside the primary component.
    local deadline=$((SECONDS + ready_timeout))
    until [[ "$(node_state "$n")" == *non-Primary* ]]; do
        if [ $SECONDS -ge $deadline ]; then
            echo "galera.sh: node $n still in the primary component ${ready_timeout}s after it was cut off" >&2
            return 1
        fi
        sleep 0.1
    done
}

case "$cmd" in
    start) start ;;
    stop) stop ;;
    url) url "$node" ;;
    pid)
        check_node "$node"
        server_pid "$node" || { echo "galera.sh: node $node is not running in $dir" >&2; exit 1; }
        ;;
    kill) check_node "$node"; kill_node "$node" ;;
    revive) check_node "$node"; revive "$node" ;;
    isolate) check_node "$node"; [ $# -eq 4 ] || usage; isolate "$node" "$4" ;;
    state) check_node "$node"; node_state "$node" ;;
    *) usage ;;
esac
