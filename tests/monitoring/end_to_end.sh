#!/usr/bin/env bash
# End to end: `sqlock metrics` feeds node_exporter's textfile collector, a
# real Prometheus scrapes it with the shipped rules loaded, and its HTTP API
# answers with the series of real runs and the alerts they raise. Both
# servers on free 127.0.0.1 ports, started and stopped here; every wait is
# for a condition, bounded. Prints the suite's time.
# Usage: end_to_end.sh SQLOCK_BINARY SOURCE_DIR
set -euo pipefail
sqlock=$1
src=$2
started=$(date +%s.%N)
for tool in prometheus prometheus-node-exporter curl python3; do
    command -v "$tool" >/dev/null || {
        echo "SQLOCK_TEST_SKIPPED: $tool is missing (Debian: prometheus prometheus-node-exporter curl)"
        exit 0
    }
done
. "$src/tests/support/ports.sh"
work=$(mktemp -d /tmp/sqlock-monitoring-XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "end_to_end.sh: $*" >&2
    for log in "$work"/*.log; do echo "--- $log" >&2; tail -20 "$log" >&2; done
    exit 1
}
# Polls `$@` every 0.2 s until it succeeds, for at most $deadline seconds.
await() {
    local deadline=$1
    shift
    local until=$(($(date +%s) + deadline))
    until "$@"; do
        (($(date +%s) < until)) || return 1
        sleep 0.2
    done
}

export SQLOCK_DB="sqlite://$work/locks.db"
"$sqlock" init >/dev/null 2>&1
textfiles=$work/textfile
mkdir -p "$textfiles"
write_metrics() {
    "$sqlock" metrics >"$textfiles/sqlock.prom.$$" && mv "$textfiles/sqlock.prom.$$" "$textfiles/sqlock.prom"
}
# Real runs: a success, a failure, a chain blocked by it, a held lock.
"$sqlock" run e2e-nightly -- true 2>/dev/null
"$sqlock" run e2e-import -- false 2>/dev/null || true
"$sqlock" run e2e-report --after e2e-import --after-within 1h -- true 2>/dev/null
"$sqlock" acquire 'e2e "held"' --expires 1h >/dev/null 2>&1
write_metrics

node_port=$(pick_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$node_port" \
    --collector.disable-defaults --collector.textfile \
    --collector.textfile.directory="$textfiles" >"$work/node_exporter.log" 2>&1 &
pids+=($!)
prom_port=$(pick_port)
while [[ $prom_port == "$node_port" ]]; do prom_port=$(pick_port); done
cat >"$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $src/tools/sqlock/share/sqlock.rules.yml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$node_port']
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)
api=http://127.0.0.1:$prom_port/api/v1

# The value of the first series PromQL $1 gives ("" for none).
value_of() {
    curl -fsS --max-time 2 --get "$api/query" --data-urlencode "query=$1" 2>/dev/null |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null
}
has_value() { [[ $(value_of "$1") == "$2" ]]; }
firing() {
    curl -fsS --max-time 2 "$api/alerts" 2>/dev/null |
        python3 -c 'import json,sys; a=json.load(sys.stdin)["data"]["alerts"]; sys.exit(0 if any(x["labels"]["alertname"]==sys.argv[1] and x["state"]=="firing" and x["labels"].get("name")==sys.argv[2] for x in a) else 1)' "$1" "$2"
}

await 60 has_value 'up{job="node"}' 1 || fail "Prometheus did not scrape node_exporter"
await 30 has_value 'sqlock_job_last_outcome{name="e2e-import",outcome="failed"}' 1 ||
    fail "no failed outcome for e2e-import"
await 30 has_value 'sqlock_job_blocked{name="e2e-report"}' 1 || fail "e2e-report not blocked"
await 30 has_value 'sqlock_lock_holders{name="e2e \"held\""}' 1 ||
    fail "no holder series for the quoted name"
[[ $(value_of 'sqlock_job_runs{name="e2e-nightly",outcome="succeeded"}') == 1 ]] ||
    fail "e2e-nightly's success not counted"
await 30 firing SqlockJobFailed e2e-import || fail "SqlockJobFailed did not fire"
await 30 firing SqlockJobBlocked e2e-report || fail "SqlockJobBlocked did not fire"

# The chain mended: the next scrape after the next metrics clears both.
"$sqlock" run e2e-import -- true 2>/dev/null
"$sqlock" run e2e-report --after e2e-import --after-within 1h -- true 2>/dev/null
write_metrics
await 30 has_value 'sqlock_job_blocked{name="e2e-report"}' 0 || fail "e2e-report still blocked"
await 30 has_value 'sqlock_job_last_outcome{name="e2e-import",outcome="succeeded"}' 1 ||
    fail "e2e-import's success not seen"
ended=$(date +%s.%N)
printf "end_to_end.sh: Prometheus saw the runs and fired the alerts; %.1f s\n" "$(awk -v a="$started" -v b="$ended" "BEGIN { print b - a }")"
