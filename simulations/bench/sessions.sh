#!/usr/bin/env bash
# Benchmark: decide every session of a Qwen runtime directory of N sessions
# (default 10000) with `tailproof replay --dir` (a dry-run reconcile of each,
# on GOMAXPROCS workers), and print its sessions per second. The sessions are
# copies of the six golden sessions of testdata/replay, in turn, each under
# its own id (the ledgers and transcripts name no session id that must match
# the file name), so their verdicts are known: the run prints the
# verdict counts (a third each completed, interrupted and unknown).
#
#   simulations/bench/sessions.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../.."
N="${1:-10000}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
SRC=testdata/replay/projects/-work-golden/chats
DST="$WORK/rt/projects/-work-golden/chats"
mkdir -p "$DST"
mapfile -t IDS < <(ls "$SRC" | grep -v '\.ledger\.jsonl$' | sed 's/\.jsonl$//' | sort)
for i in $(seq 0 $((N - 1))); do
  id=${IDS[$((i % ${#IDS[@]}))]}
  new=$(printf '%08x-0000-4000-8000-%012x' "$i" "$i")
  cp "$SRC/$id.jsonl" "$DST/$new.jsonl"
  [ -f "$SRC/$id.ledger.jsonl" ] && cp "$SRC/$id.ledger.jsonl" "$DST/$new.ledger.jsonl"
done
go build -o "$WORK/tailproof" ./cmd/tailproof
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KiB peak RSS" -o "$WORK/time" \
  "$WORK/tailproof" replay --dir "$WORK/rt" --json >"$WORK/out.json"
cat "$WORK/time"
python3 - "$WORK/out.json" "$WORK/time" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
wall, user, sys_ = (float(x.split()[0]) for x in open(sys.argv[2]).read().split(", ")[:3])
print(f"{s['sessions']} sessions: {s['sessionsPerSecond']:.0f} sessions/s (deciding), "
      f"{s['sessions'] / (user + sys_):.0f} per CPU-second; verdicts {s['verdicts']}")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
