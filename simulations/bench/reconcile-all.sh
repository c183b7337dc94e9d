#!/usr/bin/env bash
# Benchmark: `tailproof reconcile --all` (ADR 0036) over a Qwen runtime
# directory of N sessions (default 10000), generated under a temporary
# directory and removed afterwards (never committed): copies of the six
# golden sessions of testdata/replay in turn, each under its own id, so the
# verdicts are known — a third each completed, interrupted and unknown, and
# two thirds of the ledgers get a terminal appended (fsynced, under the
# lock). Each worker count gets a fresh copy; then the run is repeated on
# the settled copy (the idempotent rerun: nothing appended, nothing fsynced).
# Prints sessions per second of wall time and per CPU-second, and peak RSS.
#
#   simulations/bench/reconcile-all.sh [N] [WORKERS...]     (default: 1 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
N="${1:-10000}"
shift || true
WORKERS=("$@")
[ ${#WORKERS[@]} -eq 0 ] && WORKERS=(1 2)
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
SRC=testdata/replay/projects/-work-golden/chats
GEN="$WORK/gen/projects/-work-golden/chats"
mkdir -p "$GEN"
python3 - "$SRC" "$GEN" "$N" <<'PY'
import os, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
ids = sorted(f[:-6] for f in os.listdir(src) if f.endswith(".jsonl") and not f.endswith(".ledger.jsonl"))
data = {(i, ext): open(os.path.join(src, i + ext), "rb").read() for i in ids for ext in (".jsonl", ".ledger.jsonl")}
for k in range(n):
    new = "%08x-0000-4000-8000-%012x" % (k, k)
    for ext in (".jsonl", ".ledger.jsonl"):
        with open(os.path.join(dst, new + ext), "wb") as f:
            f.write(data[(ids[k % len(ids)], ext)])
PY
go build -o "$WORK/tailproof" ./cmd/tailproof
sync # the generated files' writeback must not land on the first run's fsyncs
report() { # label json time
  python3 - "$@" <<'PY'
import json, sys
label, doc, tf = sys.argv[1:]
s = json.load(open(doc))
f = open(tf).read().strip().splitlines()[-1].split(", ")
wall, user, sys_ = (float(x.split()[0]) for x in f[:3])
rss = int(f[3].split()[0])
t = s["totals"]
print(f"{label}: {t['sessions']} sessions, {s['seconds']:.2f} s reconciling = {s['sessionsPerSecond']:.0f} sessions/s; "
      f"{user:.2f} s user + {sys_:.2f} s sys = {t['sessions'] / (user + sys_):.0f} sessions per CPU-second; "
      f"{rss / 1024:.1f} MiB peak RSS; appended {t['appended']}; outcomes {t['outcomes']}; exit {s['exitCode']}")
PY
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for w in "${WORKERS[@]}"; do
  rm -rf "$WORK/rt" && cp -r "$WORK/gen" "$WORK/rt" && sync
  for pass in first rerun; do
    /usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KiB peak RSS" -o "$WORK/time" \
      "$WORK/tailproof" reconcile --all --qwen-runtime "$WORK/rt" --workers "$w" --now 1900000000000 --json >"$WORK/out.json" || true
    report "--workers $w, $pass" "$WORK/out.json" "$WORK/time"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
