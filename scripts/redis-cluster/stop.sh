#!/usr/bin/env bash
# Stops the cluster started by scripts/redis-cluster/start.sh <dir> and removes
# <dir>. Safe to run twice, or on a half-started cluster: it shuts down every
# redis-server whose pid file is in <dir> (SHUTDOWN NOSAVE, then SIGKILL after
# 5 s) and touches no other process.
#
#   scripts/redis-cluster/stop.sh <dir>
set -uo pipefail

dir=${1:?usage: stop.sh <dir>}
[[ -d "$dir" ]] || exit 0

pids=()
for pidfile in "$dir"/redis-*.pid; do
  [[ -e "$pidfile" ]] || continue
  port=${pidfile##*/redis-}
  port=${port%.pid}
  pid=$(cat "$pidfile" 2>/dev/null || true)
  redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || true
  [[ -n "$pid" ]] && pids+=("$pid")
done
for pid in "${pids[@]}"; do
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  # only a redis-server we started: the pid file may be stale and the pid reused
  if kill -0 "$pid" 2>/dev/null && grep -q redis-server "/proc/$pid/cmdline" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
  fi
done
rm -rf "$dir"
