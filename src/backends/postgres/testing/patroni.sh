#!/bin/bash
# patroni.sh — a throwaway 3-node Patroni cluster on 127.0.0.1, for sqlock's
# high-availability tests: Debian's patroni and etcd-server, PostgreSQL's own
# binaries (the newest /usr/lib/postgresql/*/bin), one etcd member.
#
#   patroni.sh start DIR [--async] [--ttl S] [--loop-wait S] [--dcs etcd|etcd3]
#                               etcd, then Patroni on node1..node3; returns once
#                               a leader runs, both replicas stream (with
#                               synchronous mode: one of them is the synchronous
#                               standby) and the test role and database exist;
#                               prints the lines of `env`
#   patroni.sh env DIR          SQLOCK_TEST_PATRONI_URL=... (below) and
#                               SQLOCK_TEST_PATRONI_LEADER=NODE
#   patroni.sh url DIR          the multi-host URL
#   patroni.sh leader DIR       the running leader's name (exit 1: none now)
#   patroni.sh await-leader DIR [--not NODE] [--timeout S]
#                               waits (default 60 s) until a leader other than
#                               NODE runs and accepts writes; prints its name
#   patroni.sh await-healthy DIR [--timeout S]
#                               waits (default 60 s) until the cluster is as
#                               `start` leaves it: a leader, both replicas
#                               streaming (one synchronous, in synchronous
#                               mode); prints the leader's name
#   patroni.sh members DIR      NAME ROLE STATE lines (ROLE leader,
#                               sync_standby or replica), from the first
#                               node's REST API that answers
#   patroni.sh list DIR         `patronictl list`
#   patroni.sh ctl DIR ARGS...  patronictl with this cluster's configuration
#                               (`ctl DIR switchover --force --leader node1`)
#   patroni.sh port DIR NODE    NODE's PostgreSQL port
#   patroni.sh pid DIR NODE     NODE's postmaster (exit 1: not running)
#   patroni.sh crash DIR NODE   SIGKILL to NODE's postmaster (and to any of its
#                               processes held by hold-wal, which never send
#                               what they hold)
#   patroni.sh hold-wal DIR NODE
#                               SIGSTOP to NODE's WAL senders: its standbys
#                               receive nothing more (replication lag that
#                               does not end)
#   patroni.sh pause DIR NODE   SIGSTOP to NODE's Patroni and every one of its
#                               PostgreSQL processes (a frozen host)
#   patroni.sh resume DIR NODE  SIGCONT to them
#   patroni.sh psql DIR NODE [ARGS...]
#                               psql as the superuser over NODE's private
#                               socket (trust there), database sqlock_test
#   patroni.sh stop DIR         kill everything started in DIR (also after a
#                               failed or half-done start), remove DIR
#
# Options of `start` (the cluster's dynamic configuration, bootstrap.dcs):
#   --async         synchronous_mode: false (default: true, and
#                   synchronous_mode_strict: false, one synchronous standby)
#   --ttl S         the leader key's TTL (default 10); retry_timeout is
#                   (TTL - loop_wait) / 2, Patroni's rule
#                   loop_wait + 2 * retry_timeout <= ttl
#   --loop-wait S   the HA loop's period (default 2)
#   --dcs etcd|etcd3
#                   Patroni's client for etcd (default etcd: the v2 API,
#                   which etcd here serves beside v3). With etcd3, Debian 12's
#                   patroni 3.0.2 lets a leader paused past its TTL overwrite
#                   its successor's leader key when it resumes: the successor
#                   steps down and is rewound, and what it committed meanwhile
#                   is gone (Patroni 3.0.3 fixed it)
# Also set: primary_start_timeout 0 (a crashed primary is failed over, not
# restarted in place), maximum_lag_on_failover 1 MB, pg_rewind for a former
# primary to rejoin (else its data directory is cloned anew).
#
# Every process runs as `postgres` when this script runs as root (PostgreSQL
# refuses root), each node's PostgreSQL listens on a free TCP port of
# 127.0.0.1 (tests/support/ports.sh) and on DIR/NODE/socket, and every TCP
# login takes a scram-sha-256 password. The URL, for the role and database
# sqlock_test (which owns the database), lists the nodes in order:
#
#   postgresql://sqlock_test:PASSWORD@127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3/sqlock_test?target_session_attrs=read-write&connect_timeout=2
#
# Passwords (the test role's, Patroni's superuser, replication and rewind
# roles') are in files only this user can read, and each is appended to
# $SQLOCK_TEST_PASSWORD_LOG if that is set (tests/run-all.sh checks that no
# password appears in the output). Logs: DIR/etcd.log, DIR/NODE/patroni.log,
# DIR/NODE/data/log/.
set -euo pipefail

usage() {
    echo "usage: $0 start DIR [--async] [--ttl S] [--loop-wait S] [--dcs etcd|etcd3] | stop DIR | env DIR |" \
        "url DIR | leader DIR | await-leader DIR [--not NODE] [--timeout S] |" \
        "await-healthy DIR [--timeout S] | members DIR | list DIR |" \
        "ctl DIR ARGS... | port|pid|crash|hold-wal|pause|resume DIR NODE | psql DIR NODE [ARGS...]" >&2
    exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2
[ -n "$dir" ] || usage
case "$dir" in
    /*) ;;
    *) dir="$PWD/$dir" ;;
esac
nodes="node1 node2 node3"
database=sqlock_test
role=sqlock_test

# port_in_use, pick_port: shared by every backend's test scripts.
. "$(dirname "${BASH_SOURCE[0]}")/../../../../tests/support/ports.sh"

bin=""
for candidate in /usr/lib/postgresql/*/bin; do
    [ -x "$candidate/pg_ctl" ] && bin="$candidate"
done

say() { echo "patroni.sh: $*" >&2; }

# PostgreSQL will not run as root: use the postgres account then.
as_server_user() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# daemon PIDFILE LOG PROGRAM ARGS...: PROGRAM in the background, as the server
# user, in a session of its own (it outlives this script, as a server started
# by pg_ctl does); its pid (the program's own: setsid and setpriv exec it) in
# PIDFILE.
daemon() {
    local pidfile=$1 log=$2
    shift 2
    if [ "$(id -u)" = 0 ]; then
        set -- setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"
    fi
    setsid "$@" </dev/null >>"$log" 2>&1 &
    echo $! >"$pidfile"
}

server_owner() {
    if [ "$(id -u)" = 0 ]; then echo postgres; else id -un; fi
}

require_cluster() {
    [ -f "$dir/ports" ] || { say "no cluster in $dir (run start first)"; exit 1; }
}

# port_of KIND NODE: a port recorded at start: KIND pg or api of a node, or
# etcd's client and peer ports (KIND etcd or peer, NODE -).
port_of() {
    awk -v k="$1" -v n="$2" '$1 == k && $2 == n { print $3 }' "$dir/ports"
}

check_node() {
    case " $nodes " in *" $1 "*) ;; *) say "no node '$1' (node1, node2, node3)"; exit 2 ;; esac
}

url() {
    require_cluster
    local hosts="" node
    for node in $nodes; do hosts="$hosts${hosts:+,}127.0.0.1:$(port_of pg "$node")"; done
    echo "postgresql://$role:$(cat "$dir/password")@$hosts/$database?target_session_attrs=read-write&connect_timeout=2"
}

# The members as one node's REST API reports them (GET /cluster), tried on
# each node in turn (a paused node does not answer): NAME ROLE STATE lines.
members() {
    require_cluster
    local apis="" node
    for node in $nodes; do apis="$apis $(port_of api "$node")"; done
    python3 - $apis <<'EOF'
import json, sys, urllib.request
for port in sys.argv[1:]:
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s/cluster" % port, timeout=1) as r:
            cluster = json.load(r)
    except Exception:
        continue
    for m in cluster.get("members", []):
        print(m.get("name"), m.get("role"), m.get("state"))
    sys.exit(0)
sys.exit(1)
EOF
}

leader() {
    local listed
    listed=$(members) || { say "no node's REST API answers"; return 1; }
    awk '$2 == "leader" && $3 == "running" { print $1; found = 1 } END { exit !found }' <<<"$listed"
}

psql_node() {
    local node=$1
    shift
    as_server_user "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/$node/socket" \
        -p "$(port_of pg "$node")" -U postgres "$@"
}

# True if NODE's PostgreSQL accepts writes now.
writable() {
    [ "$(psql_node "$1" -d postgres -At -c "SELECT NOT pg_is_in_recovery()" 2>/dev/null)" = t ]
}

await_leader() {
    local not="" timeout=60 found deadline
    while [ $# -gt 0 ]; do
        case "$1" in
            --not) not=$2; shift 2 ;;
            --timeout) timeout=$2; shift 2 ;;
            *) usage ;;
        esac
    done
    deadline=$((SECONDS + timeout))
    while [ $SECONDS -lt $deadline ]; do
        if found=$(leader 2>/dev/null) && [ "$found" != "$not" ] && writable "$found"; then
            echo "$found"
            return 0
        fi
        sleep 0.1
    done
    say "no leader${not:+ other than $not} within ${timeout}s:"
    members >&2 || true
    return 1
}

print_env() {
    echo "SQLOCK_TEST_PATRONI_URL=$(url)"
    echo "SQLOCK_TEST_PATRONI_LEADER=$(leader)"
}

# The first line of NODE's postmaster.pid, if that process is alive.
postmaster_pid() {
    local pid
    pid=$(head -n 1 "$dir/$1/data/postmaster.pid" 2>/dev/null) && [ -n "$pid" ] &&
        kill -0 "$pid" 2>/dev/null && echo "$pid"
}

patroni_pid() {
    local pid
    pid=$(cat "$dir/$1/patroni.pid" 2>/dev/null) && ours "$pid" && echo "$pid"
}

# True if process $1 was started from DIR (its command line names it).
ours() {
    [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -qF "$dir/"
}

# NODE's PostgreSQL processes: the postmaster and its children.
postgres_pids() {
    local pm
    pm=$(postmaster_pid "$1") || return 0
    echo "$pm"
    pgrep -P "$pm" || true
}

signal_node() {  # SIGNAL NODE: Patroni first, so that it does not react
    local pids
    pids="$(patroni_pid "$2" || true) $(postgres_pids "$2")"
    [ -n "${pids// /}" ] || { say "nothing of $2 is running"; return 1; }
    # A backend may have ended since it was listed.
    # shellcheck disable=SC2086
    kill -"$1" $pids 2>/dev/null || true
}

new_password() {
    local password
    password="sqlockPw$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    [ -n "${SQLOCK_TEST_PASSWORD_LOG:-}" ] && echo "$password" >>"$SQLOCK_TEST_PASSWORD_LOG"
    echo "$password"
}

# Free ports for etcd (client, peer) and each node (PostgreSQL, REST API),
# all different.
pick_ports() {
    local taken=" " kind port
    : >"$dir/ports"
    for kind in "etcd -" "peer -" "pg node1" "api node1" "pg node2" "api node2" "pg node3" "api node3"; do
        port=$(pick_port)
        while [[ "$taken" == *" $port "* ]]; do port=$(pick_port); done
        taken="$taken$port "
        echo "$kind $port" >>"$dir/ports"
    done
}

# True if a process of the cluster could not bind its port (taken after it
# was picked).
port_clash() {
    grep -qsE "[Aa]ddress already in use|could not bind" "$dir/etcd.log" "$dir"/node*/patroni.log \
        "$dir"/node*/data/log/*.log
}

start_etcd() {
    local client peer
    client=$(port_of etcd -)
    peer=$(port_of peer -)
    mkdir -p "$dir/etcd"
    chown "$(server_owner)" "$dir/etcd"
    chmod 0700 "$dir/etcd"
    # One member: a quorum of itself. A short election timeout so that it
    # elects itself leader at once. Both APIs: Patroni's `etcd` section
    # speaks v2, `etcd3` v3.
    daemon "$dir/etcd.pid" "$dir/etcd.log" etcd --name etcd1 --data-dir "$dir/etcd" \
        --listen-client-urls "http://127.0.0.1:$client" \
        --advertise-client-urls "http://127.0.0.1:$client" \
        --listen-peer-urls "http://127.0.0.1:$peer" \
        --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
        --initial-cluster "etcd1=http://127.0.0.1:$peer" \
        --initial-cluster-state new --initial-cluster-token "$(basename "$dir")" \
        --heartbeat-interval 50 --election-timeout 500 --enable-v2=true \
        --logger zap --log-outputs stderr
    local i
    for i in $(seq 1 200); do
        ETCDCTL_API=3 etcdctl --endpoints "http://127.0.0.1:$client" --dial-timeout 1s \
            endpoint health >/dev/null 2>&1 && return 0
        kill -0 "$(cat "$dir/etcd.pid")" 2>/dev/null || break
        sleep 0.05
    done
    say "etcd did not start; last lines of $dir/etcd.log:"
    tail -n 20 "$dir/etcd.log" >&2
    return 1
}

write_config() {  # NODE SYNC TTL LOOP_WAIT DCS
    local node=$1 sync=$2 ttl=$3 loop_wait=$4 dcs=$5 retry
    retry=$(((ttl - loop_wait) / 2))
    mkdir -p "$dir/$node/socket"
    chmod 0700 "$dir/$node" "$dir/$node/socket"
    (
        umask 077
        cat >"$dir/$node/patroni.yml" <<EOF
scope: $(cat "$dir/scope")
namespace: /sqlock/
name: $node

restapi:
  listen: 127.0.0.1:$(port_of api "$node")
  connect_address: 127.0.0.1:$(port_of api "$node")

$dcs:
  hosts: 127.0.0.1:$(port_of etcd -)

bootstrap:
  dcs:
    ttl: $ttl
    loop_wait: $loop_wait
    retry_timeout: $retry
    maximum_lag_on_failover: 1048576
    primary_start_timeout: 0
    synchronous_mode: $sync
    synchronous_mode_strict: false
    synchronous_node_count: 1
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        max_connections: 200
        wal_keep_size: 128MB
        password_encryption: scram-sha-256
        logging_collector: on
        log_line_prefix: '%m [%p] %q%u@%d app=%a '
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - auth-local: trust
    - auth-host: scram-sha-256

postgresql:
  listen: 127.0.0.1:$(port_of pg "$node")
  connect_address: 127.0.0.1:$(port_of pg "$node")
  data_dir: $dir/$node/data
  bin_dir: $bin
  pgpass: $dir/$node/pgpass
  use_unix_socket: true
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  authentication:
    superuser:
      username: postgres
      password: $(cat "$dir/internal_password")
    replication:
      username: replicator
      password: $(cat "$dir/internal_password")
    rewind:
      username: rewinder
      password: $(cat "$dir/internal_password")
  parameters:
    unix_socket_directories: $dir/$node/socket
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256

watchdog:
  mode: off

tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
EOF
    )
    chown -R "$(server_owner)" "$dir/$node"
}

start_patroni() {  # NODE
    local node=$1
    daemon "$dir/$node/patroni.pid" "$dir/$node/patroni.log" patroni "$dir/$node/patroni.yml"
}

# Until a leader runs and every replica streams from it (with synchronous
# mode: one of them as the synchronous standby, in PostgreSQL's view and in
# Patroni's, so that a failover has a candidate), within TIMEOUT seconds.
await_healthy() {
    local sync=$1 timeout=${2:-60} leader_node want roles state deadline
    deadline=$((SECONDS + timeout))
    want="streaming async,streaming async"
    roles="leader running,replica running,replica running"
    if [ "$sync" = true ]; then
        want="streaming async,streaming sync"
        roles="leader running,replica running,sync_standby running"
    fi
    while [ $SECONDS -lt $deadline ]; do
        if leader_node=$(leader 2>/dev/null) && writable "$leader_node"; then
            state=$(psql_node "$leader_node" -d postgres -At -c \
                "SELECT string_agg(state || ' ' || sync_state, ',' ORDER BY sync_state)
                 FROM pg_stat_replication" 2>/dev/null || true)
            if [ "$state" = "$want" ] &&
                [ "$(members 2>/dev/null | awk '{ print $2, $3 }' | sort | paste -sd,)" = "$roles" ]; then
                echo "$leader_node"
                return 0
            fi
        fi
        local node
        for node in $nodes; do
            kill -0 "$(cat "$dir/$node/patroni.pid")" 2>/dev/null && continue
            say "Patroni on $node exited; last lines of $dir/$node/patroni.log:"
            tail -n 20 "$dir/$node/patroni.log" >&2
            return 1
        done
        sleep 0.1
    done
    say "the cluster did not become healthy within ${timeout}s (replication: '${state:-}'):"
    members >&2 || true
    for node in $nodes; do
        say "last lines of $dir/$node/patroni.log:"
        tail -n 10 "$dir/$node/patroni.log" >&2
    done
    return 1
}

create_role() {  # LEADER
    psql_node "$1" -d postgres <<EOF
CREATE ROLE $role LOGIN PASSWORD '$(cat "$dir/password")';
CREATE DATABASE $database OWNER $role TEMPLATE template0 ENCODING 'UTF8';
EOF
}

start() {
    local sync=true ttl=10 loop_wait=2 dcs=etcd
    while [ $# -gt 0 ]; do
        case "$1" in
            --async) sync=false; shift ;;
            --dcs) dcs=$2; shift 2 ;;
            --ttl) ttl=$2; shift 2 ;;
            --loop-wait) loop_wait=$2; shift 2 ;;
            *) usage ;;
        esac
    done
    [[ "$ttl" =~ ^[0-9]+$ && "$loop_wait" =~ ^[0-9]+$ ]] || usage
    [ "$dcs" = etcd ] || [ "$dcs" = etcd3 ] || usage
    [ $(((ttl - loop_wait) / 2)) -ge 1 ] ||
        { say "--ttl must exceed --loop-wait by 2 s at least"; exit 2; }
    [ -n "$bin" ] || { say "no PostgreSQL binaries found"; exit 1; }
    for tool in patroni patronictl etcd etcdctl python3; do
        command -v "$tool" >/dev/null ||
            { say "$tool not found (apt-get install etcd-server etcd-client patroni)"; exit 1; }
    done
    if [ -f "$dir/ports" ]; then
        # Started before: running if a leader answers.
        leader >/dev/null 2>&1 || { say "$dir holds a cluster that is not running; stop it first"; exit 1; }
        print_env
        return 0
    fi
    # Each attempt in a process of its own (errexit holds there); one whose
    # port was taken between picking and binding is made again on new ports.
    local attempt
    for attempt in 1 2 3; do
        bash "${BASH_SOURCE[0]}" start-once "$dir" "$sync" "$ttl" "$loop_wait" "$dcs" && return 0
        if ! port_clash || [ "$attempt" = 3 ]; then
            stop >/dev/null 2>&1
            return 1
        fi
        stop >/dev/null 2>&1
        say "a port was taken meanwhile: starting again on other ports"
    done
}

# One attempt of `start`, with its options checked; stopped by the caller
# if it fails.
start_once() {
    local sync=$1 ttl=$2 loop_wait=$3 dcs=$4
    mkdir -p "$dir"
    chmod 0755 "$dir"
    pick_ports
    (umask 077 && new_password >"$dir/password" && new_password >"$dir/internal_password")
    echo "sqlock-$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$dir/scope"
    echo "$sync" >"$dir/synchronous"
    start_etcd
    local node
    for node in $nodes; do write_config "$node" "$sync" "$ttl" "$loop_wait" "$dcs"; done
    for node in $nodes; do start_patroni "$node"; done
    local first
    first=$(await_healthy "$sync")
    create_role "$first" >>"$dir/$first/patroni.log" 2>&1 ||
        { say "creating the test role failed; see $dir/$first/patroni.log"; return 1; }
    print_env
}

# Every process whose command line names DIR (etcd, Patroni, and what they
# run: initdb, pg_basebackup, pg_rewind, postmasters).
processes_of_dir() {
    local p
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [ "$p" != $$ ] && [ "$p" != "$BASHPID" ] && ours "$p" && echo "$p"
    done
    return 0
}

stop() {
    local node pids pid i
    # Patroni first (it would restart PostgreSQL), then PostgreSQL
    # (immediate shutdown: SIGQUIT, after SIGCONT in case a test paused it),
    # then etcd; anything else of DIR last.
    for node in $nodes; do
        pid=$(patroni_pid "$node" 2>/dev/null) || continue
        kill -CONT "$pid" 2>/dev/null || true
        kill -KILL "$pid" 2>/dev/null || true
    done
    for node in $nodes; do
        pids=$(postgres_pids "$node" 2>/dev/null)
        [ -n "$pids" ] || continue
        # shellcheck disable=SC2086
        kill -CONT $pids 2>/dev/null || true
        kill -QUIT "$(echo "$pids" | head -n 1)" 2>/dev/null || true
    done
    for i in $(seq 1 100); do
        pids=""
        for node in $nodes; do pids="$pids$(postmaster_pid "$node" 2>/dev/null || true)"; done
        [ -z "$pids" ] && break
        sleep 0.05
    done
    for node in $nodes; do
        pid=$(postmaster_pid "$node" 2>/dev/null) || continue
        pkill -KILL -P "$pid" 2>/dev/null || true
        kill -KILL "$pid" 2>/dev/null || true
    done
    if [ -f "$dir/etcd.pid" ]; then
        pid=$(cat "$dir/etcd.pid")
        ours "$pid" && kill -TERM "$pid" 2>/dev/null || true
    fi
    for i in $(seq 1 100); do
        pids=$(processes_of_dir)
        [ -z "$pids" ] && break
        [ "$i" -gt 40 ] && { echo "$pids" | xargs -r kill -KILL 2>/dev/null || true; }
        sleep 0.05
    done
    # Only remove what looks like our cluster directory.
    if [ -d "$dir" ] && { [ -f "$dir/ports" ] || [ -f "$dir/etcd.pid" ] || [ -z "$(ls -A "$dir")" ]; }; then
        rm -rf "$dir"
    fi
}

case "$cmd" in
    start) start "$@" ;;
    start-once) [ $# -eq 4 ] || usage; start_once "$@" ;;
    stop) [ $# -eq 0 ] || usage; stop ;;
    env) [ $# -eq 0 ] || usage; print_env ;;
    url) [ $# -eq 0 ] || usage; url ;;
    leader) [ $# -eq 0 ] || usage; leader ;;
    members) [ $# -eq 0 ] || usage; members ;;
    await-leader) await_leader "$@" ;;
    await-healthy) require_cluster
        [ $# -eq 0 ] || { [ $# -eq 2 ] && [ "$1" = --timeout ]; } || usage
        await_healthy "$(cat "$dir/synchronous")" "${2:-60}" ;;
    list) [ $# -eq 0 ] || usage; require_cluster; patronictl -c "$dir/node1/patroni.yml" list ;;
    ctl) require_cluster; patronictl -c "$dir/node1/patroni.yml" "$@" ;;
    port) [ $# -eq 1 ] || usage; require_cluster; check_node "$1"; port_of pg "$1" ;;
    pid) [ $# -eq 1 ] || usage; require_cluster; check_node "$1"; postmaster_pid "$1" ;;
    crash) [ $# -eq 1 ] || usage; require_cluster; check_node "$1"
        pid=$(postmaster_pid "$1") || { say "$1's PostgreSQL is not running"; exit 1; }
        held=$(ps -o pid=,stat= --ppid "$pid" | awk '$2 ~ /^T/ { print $1 }')
        # shellcheck disable=SC2086
        kill -KILL "$pid" $held ;;
    hold-wal) [ $# -eq 1 ] || usage; require_cluster; check_node "$1"
        pid=$(postmaster_pid "$1") || { say "$1's PostgreSQL is not running"; exit 1; }
        senders=$(pgrep -P "$pid" -f "walsender" || true)
        [ -n "$senders" ] || { say "$1 has no WAL sender"; exit 1; }
        # shellcheck disable=SC2086
        kill -STOP $senders ;;
    pause) [ $# -eq 1 ] || usage; require_cluster; check_node "$1"; signal_node STOP "$1" ;;
    resume) [ $# -eq 1 ] || usage; require_cluster; check_node "$1"; signal_node CONT "$1" ;;
    psql) [ $# -ge 1 ] || usage; require_cluster; check_node "$1"; node=$1; shift
        psql_node "$node" -d "$database" "$@" ;;
    *) usage ;;
esac
