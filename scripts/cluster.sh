#!/usr/bin/env bash
# Runs a local Strata cluster of N node processes on 127.0.0.1 (see docs/cluster.md).
#
#   scripts/cluster.sh start [N=3]     start nodes 1..N (ports BASE_PORT+1..N), node 1 is the seed
#   scripts/cluster.sh add ID          start node ID with STRATA_JOIN (asks node 1 to add it)
#   scripts/cluster.sh remove ID       remove node ID from the cluster, wait until its replicas moved away, stop its process
#   scripts/cluster.sh status          processes, readiness and each node's view of the shard groups
#   scripts/cluster.sh stop            SIGTERM every node (SIGKILL after 20 s)
#   scripts/cluster.sh clean           stop, then delete the run directory (data and logs)
#
# Environment: STRATA_RUN_DIR (default ./data/cluster-run, git-ignored), BASE_PORT (default 3000), STRATA_SHARDS (default 1),
# STRATA_API_KEY (admin key for status/remove; default: generated once and kept in the run directory),
# STRATA_CLUSTER_SECRET (default: generated once and kept), any other STRATA_* variable is passed on.
# The run directory holds pids/<id>.pid, logs/<id>.log, data/<id>/ and the generated secrets.
set -euo pipefail
cd "$(dirname "$0")/.."

RUN_DIR="${STRATA_RUN_DIR:-./data/cluster-run}"
BASE_PORT="${BASE_PORT:-3000}"
mkdir -p "$RUN_DIR/pids" "$RUN_DIR/logs" "$RUN_DIR/data"

secret_file() { # name → value, generated once
  local f="$RUN_DIR/$1"
  [ -s "$f" ] || (umask 077; node -e "process.stdout.write(require('crypto').randomBytes(24).toString('hex'))" > "$f")
  cat "$f"
}
export STRATA_CLUSTER_SECRET="${STRATA_CLUSTER_SECRET:-$(secret_file cluster-secret)}"
export STRATA_API_KEY="${STRATA_API_KEY:-sk_$(secret_file api-key)}"
export STRATA_SHARDS="${STRATA_SHARDS:-1}"

url_of() { echo "http://127.0.0.1:$((BASE_PORT + $1))"; }
pid_of() { cat "$RUN_DIR/pids/$1.pid" 2>/dev/null || true; }
alive() { local p; p="$(pid_of "$1")"; [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

launch() { # id [extra env...]
  [ -f packages/server/dist/main.js ] || npm run build # the nodes run the compiled build, as npm start does
  local id="$1"; shift
  if alive "$id"; then echo "node $id already running (pid $(pid_of "$id"))"; return; fi
  (umask 077; mkdir -p "$RUN_DIR/data/$id") # the node refuses a data directory others can read
  env STRATA_NODE_ID="$id" STRATA_PORT="$((BASE_PORT + id))" STRATA_HOST=127.0.0.1 \
    STRATA_DATA_DIR="$RUN_DIR/data/$id" STRATA_ADMIN_API_KEY="$STRATA_API_KEY" "$@" \
    nohup node packages/server/dist/main.js >> "$RUN_DIR/logs/$id.log" 2>&1 &
  echo $! > "$RUN_DIR/pids/$id.pid"
  echo "node $id: pid $!, $(url_of "$id"), log $RUN_DIR/logs/$id.log"
}

wait_ready() { # id
  for _ in $(seq 1 150); do
    if curl -fsS "$(url_of "$1")/readyz" > /dev/null 2>&1; then echo "node $1 ready"; return 0; fi
    alive "$1" || { echo "node $1 exited; see $RUN_DIR/logs/$1.log" >&2; return 1; }
    sleep 0.2
  done
  echo "node $1 not ready after 30 s; see $RUN_DIR/logs/$1.log" >&2
  return 1
}

cmd="${1:-status}"
case "$cmd" in
  start)
    n="${2:-3}"
    peers=""
    for i in $(seq 1 "$n"); do peers="${peers:+$peers,}$i=$(url_of "$i")"; done
    for i in $(seq 1 "$n"); do launch "$i" STRATA_PEERS="$peers"; done
    for i in $(seq 1 "$n"); do wait_ready "$i"; done
    echo "admin API key: $STRATA_API_KEY"
    ;;
  add)
    id="${2:?usage: cluster.sh add ID}"
    launch "$id" STRATA_JOIN="$(url_of 1)"
    wait_ready "$id"
    ;;
  remove)
    id="${2:?usage: cluster.sh remove ID}"
    via=""
    for f in "$RUN_DIR"/pids/*.pid; do
      other="$(basename "$f" .pid)"
      if [ "$other" != "$id" ] && alive "$other"; then via="$other"; break; fi
    done
    [ -n "$via" ] || { echo "no other running node to ask" >&2; exit 1; }
    curl -fsS -X DELETE -H "x-api-key: $STRATA_API_KEY" "$(url_of "$via")/v1/cluster/nodes/$id"; echo
    # its replicas of the other shard groups drain first (placement): wait until no group names it (at most 5 min)
    for _ in $(seq 1 1500); do
      curl -fsS -H "x-api-key: $STRATA_API_KEY" "$(url_of "$via")/v1/cluster/status" 2>/dev/null \
        | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const g=JSON.parse(s).placement.groups;process.exit(g.some(x=>x.voters.includes($id)||x.learners.includes($id))?1:0)})" && break
      sleep 0.2
    done
    "$0" stop-one "$id"
    ;;
  stop-one)
    id="${2:?}"
    if alive "$id"; then
      p="$(pid_of "$id")"; kill -TERM "$p"
      for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
      kill -0 "$p" 2>/dev/null && kill -KILL "$p"
      echo "node $id stopped"
    fi
    rm -f "$RUN_DIR/pids/$id.pid"
    ;;
  stop)
    for f in "$RUN_DIR"/pids/*.pid; do [ -e "$f" ] && "$0" stop-one "$(basename "$f" .pid)"; done
    true
    ;;
  status)
    for f in "$RUN_DIR"/pids/*.pid; do
      [ -e "$f" ] || { echo "no nodes"; break; }
      id="$(basename "$f" .pid)"
      if alive "$id"; then
        ready="$(curl -s -o /dev/null -w '%{http_code}' "$(url_of "$id")/readyz" || true)"
        echo "node $id: pid $(pid_of "$id"), $(url_of "$id"), readyz $ready"
        curl -s -H "x-api-key: $STRATA_API_KEY" "$(url_of "$id")/v1/cluster/status" | node -e '
          let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => {
            try {
              for (const g of JSON.parse(s).shards) console.log(`  shard ${g.shard_id}: ${g.role}, leader ${g.leader}, term ${g.term}, commit ${g.commit_index}, applied ${g.applied_index}, members ${g.members.map((m) => m.node_id + (m.voter ? "" : "(learner)")).join(",")}`);
            } catch { console.log("  (no status: " + s.slice(0, 200) + ")"); }
          });'
      else
        echo "node $id: not running"
      fi
    done
    ;;
  clean)
    "$0" stop
    rm -rf "$RUN_DIR"
    echo "removed $RUN_DIR"
    ;;
  *)
    sed -n '2,16p' "$0"; exit 2 ;;
esac
