#!/usr/bin/env bash
# Starts a local Redis Cluster for tests: 3 masters + 3 replicas (6 redis-server
# processes on 127.0.0.1), no persistence, every file under <dir>.
#
#   scripts/redis-cluster/start.sh <dir>
#
# Ports: six free ports picked by the OS, or REDIS_CLUSTER_BASE_PORT=<p> for
# p…p+5. REDIS_CLUSTER_NODE_TIMEOUT_MS sets cluster-node-timeout (default 2000,
# so a replica takes over a killed master within a few seconds).
# On success it writes the seed list `127.0.0.1:p1,…,127.0.0.1:p6` to <dir>/nodes
# and prints it on stdout (progress goes to stderr). Idempotent: if <dir>/nodes
# names a cluster that still answers cluster_state:ok, it prints it again and
# exits; a half-started cluster in <dir> is stopped and started afresh.
# Stop it with scripts/redis-cluster/stop.sh <dir>.
set -euo pipefail

dir=${1:?usage: start.sh <dir>}
here=$(cd "$(dirname "$0")" && pwd)
node_timeout=${REDIS_CLUSTER_NODE_TIMEOUT_MS:-2000}
log() { printf '[redis-cluster] %s\n' "$*" >&2; }

command -v redis-server >/dev/null || { log "redis-server not found on PATH"; exit 1; }
command -v redis-cli >/dev/null || { log "redis-cli not found on PATH"; exit 1; }

cluster_ok() { # port
  redis-cli -h 127.0.0.1 -p "$1" cluster info 2>/dev/null | grep -q '^cluster_state:ok'
}

if [[ -s "$dir/nodes" ]]; then
  all_ok=1
  IFS=, read -r -a seeds <"$dir/nodes"
  for seed in "${seeds[@]}"; do cluster_ok "${seed##*:}" || all_ok=0; done
  if [[ $all_ok == 1 ]]; then
    log "already running in $dir"
    cat "$dir/nodes"
    exit 0
  fi
fi
if [[ -d "$dir" ]]; then "$here/stop.sh" "$dir"; fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# On any failure: show what the servers logged, stop whatever did start, remove <dir>.
fail() {
  log "$*"
  for f in "$dir"/*.log; do [[ -e "$f" ]] && { echo "--- $f" >&2; tail -n 5 "$f" >&2; }; done
  "$here/stop.sh" "$dir"
  exit 1
}

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

ports=()
if [[ -n ${REDIS_CLUSTER_BASE_PORT:-} ]]; then
  for i in 0 1 2 3 4 5; do ports+=($((REDIS_CLUSTER_BASE_PORT + i))); done
else
  while [[ ${#ports[@]} -lt 6 ]]; do
    p=$(free_port)
    # the cluster bus uses port+10000: it must be free too, and ports distinct
    if [[ $p -lt 55535 && " ${ports[*]} " != *" $p "* ]] && ! (echo >"/dev/tcp/127.0.0.1/$((p + 10000))") 2>/dev/null; then
      ports+=("$p")
    fi
  done
fi

for p in "${ports[@]}"; do
  redis-server --port "$p" --bind 127.0.0.1 --daemonize yes \
    --cluster-enabled yes --cluster-config-file "$dir/nodes-$p.conf" \
    --cluster-node-timeout "$node_timeout" \
    --save '' --appendonly no --dir "$dir" \
    --pidfile "$dir/redis-$p.pid" --logfile "$dir/redis-$p.log"
done

for p in "${ports[@]}"; do
  for i in $(seq 1 100); do
    redis-cli -h 127.0.0.1 -p "$p" ping >/dev/null 2>&1 && break
    [[ $i == 100 ]] && fail "redis-server on port $p did not start"
    sleep 0.05
  done
done

addresses=()
for p in "${ports[@]}"; do addresses+=("127.0.0.1:$p"); done
log "creating the cluster on ${addresses[*]}"
redis-cli --cluster create "${addresses[@]}" --cluster-replicas 1 --cluster-yes >"$dir/create.log" 2>&1 ||
  fail "redis-cli --cluster create failed"

# Every node must agree the cluster is ok, and every replica must have synced.
for p in "${ports[@]}"; do
  for i in $(seq 1 300); do
    cluster_ok "$p" && break
    [[ $i == 300 ]] && fail "node $p did not reach cluster_state:ok"
    sleep 0.1
  done
done
for p in "${ports[@]}"; do
  for i in $(seq 1 300); do
    info=$(redis-cli -h 127.0.0.1 -p "$p" info replication 2>/dev/null)
    if grep -q '^role:master' <<<"$info" || grep -q '^master_link_status:up' <<<"$info"; then break; fi
    [[ $i == 300 ]] && fail "replica $p did not sync with its master"
    sleep 0.1
  done
done

seedlist=$(IFS=,; echo "${addresses[*]}")
echo "$seedlist" >"$dir/nodes"
log "cluster ok (3 masters, 3 replicas); seeds in $dir/nodes"
echo "$seedlist"
