#!/usr/bin/env bash
# Benchmark: reconcile a large Qwen transcript whose last prompt was left
# in_flight, with tailproof and with Qwen Code 0.24.4's own reconciler, on
# the same files, side by side in one run, for each content shape of
# simulations/bench/shape; `wc -l` on the same file is the page-cache scan
# limit. Prints one line per run (wall time, MB/s, peak RSS, verdict) and a
# median line per shape.
#
#   simulations/bench/reconcile.sh [MB] [SHAPE...]      (default: 600 ls dense)
#
# RUNS (default 3) sets the runs per shape; each run restores the ledger so
# that every reconcile decides the same dangling prompt. REWIND_EVERY makes
# the generator branch every N-th turn (the two-pass fallback). FILES=DIR
# gives the files shape its tool outputs: the regular files under DIR. tailproof is
# measured as built by default and, as "tailproof+simd", built with
# GOEXPERIMENT=simd (the AVX2 string skipper; SIMD=0 leaves it out).
# Needs: go; for the reference, node and @qwen-code/qwen-code@0.24.4
# (simulations/conformance/install.sh, or set QWEN_PKG to the package dir).
set -euo pipefail
cd "$(dirname "$0")/../.."
MB="${1:-600}"
shift || true
SHAPES=("$@")
[ ${#SHAPES[@]} -eq 0 ] && SHAPES=(ls dense)
RUNS="${RUNS:-3}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
SID=b0000000-0000-4000-8000-000000000600
CWD=/bench/workspace
CHATS=projects/-bench-workspace/chats

PKG="${QWEN_PKG:-}"
for c in "$HOME/.cache/tailproof/qwen-code-0.24.4/node_modules/@qwen-code/qwen-code" /tmp/qwenref/node_modules/@qwen-code/qwen-code; do
  [ -z "$PKG" ] && [ -d "$c" ] && PKG="$c"
done
REF=0
if [ -n "$PKG" ] && command -v node >/dev/null; then REF=1; else
  echo "reference: skipped (node or @qwen-code/qwen-code@0.24.4 not found)"
fi

go build -o "$WORK/tailproof" ./cmd/tailproof
VARIANTS=(tailproof)
if [ "${SIMD:-1}" = 1 ] && GOEXPERIMENT=simd go build -o "$WORK/tailproof+simd" ./cmd/tailproof 2>/dev/null; then
  VARIANTS+=(tailproof+simd)
fi
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# measure CMD... prints "wall-seconds KiB cpu-seconds" of the command (CPU
# time, user plus system, is the figure to compare on a loaded machine).
measure() {
  /usr/bin/time -f "%e %M %U %S" -o "$WORK/time" "$@" >/dev/null 2>"$WORK/stderr" || { cat "$WORK/stderr" >&2; return 1; }
  awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }' "$WORK/time"
}
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.0f", b / 1e6 / s; else print "inf" }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for shape in "${SHAPES[@]}"; do
  rm -rf "$WORK/tp" "$WORK/ref"
  go run ./simulations/bench/gen -dir "$WORK/tp" -mb "$MB" -shape "$shape" -rewind-every "${REWIND_EVERY:-0}" ${FILES:+-files "$FILES"} | sed 's/.*chats: /generated: /'
  cp -r "$WORK/tp" "$WORK/ref"
  cp "$WORK/tp/$CHATS/$SID.ledger.jsonl" "$WORK/ledger.orig"
  FILE="$WORK/tp/$CHATS/$SID.jsonl"
  BYTES=$(stat -c %s "$FILE")
  cat "$FILE" "$WORK/ref/$CHATS/$SID.jsonl" >/dev/null # both copies in the page cache
  for v in "${VARIANTS[@]}" ref wc; do : >"$WORK/$v.s"; : >"$WORK/$v.kib"; : >"$WORK/$v.cpu"; done
  for run in $(seq "$RUNS"); do
    line="$shape run $run:"
    for v in "${VARIANTS[@]}"; do
      cp "$WORK/ledger.orig" "$WORK/tp/$CHATS/$SID.ledger.jsonl"
      read -r ts tk tc < <(measure "$WORK/$v" reconcile --qwen-runtime "$WORK/tp" --cwd "$CWD" --session "$SID" --now 1900000000000)
      verdict=$(tail -1 "$WORK/tp/$CHATS/$SID.ledger.jsonl" | sed 's/.*"terminal":"\([a-z]*\)".*/\1/')
      line="$line $v $ts s ($(mbps "$BYTES" "$ts") MB/s, cpu $tc s, $((tk / 1024)) MiB, $verdict) |"
      echo "$ts" >>"$WORK/$v.s"; echo "$tk" >>"$WORK/$v.kib"; echo "$tc" >>"$WORK/$v.cpu"
    done
    if [ "$REF" = 1 ]; then
      cp "$WORK/ledger.orig" "$WORK/ref/$CHATS/$SID.ledger.jsonl"
      read -r rs rk rc < <(measure node --max-old-space-size=8192 simulations/bench/reference.mjs "$PKG" "$WORK/ref" "$CWD" "$SID")
      rverdict=$(tail -1 "$WORK/ref/$CHATS/$SID.ledger.jsonl" | sed 's/.*"terminal":"\([a-z]*\)".*/\1/')
      line="$line reference $rs s (cpu $rc s, $((rk / 1024)) MiB, $rverdict) |"
      echo "$rs" >>"$WORK/ref.s"; echo "$rk" >>"$WORK/ref.kib"; echo "$rc" >>"$WORK/ref.cpu"
    fi
    read -r ws _ wc < <(measure wc -l "$FILE")
    echo "$ws" >>"$WORK/wc.s"; echo "$wc" >>"$WORK/wc.cpu"
    echo "$line wc -l $ws s ($(mbps "$BYTES" "$ws") MB/s, cpu $wc s)"
  done
  ws=$(median <"$WORK/wc.s"); wc=$(median <"$WORK/wc.cpu")
  [ "$REF" = 1 ] && rs=$(median <"$WORK/ref.s") && rk=$(median <"$WORK/ref.kib") && rc=$(median <"$WORK/ref.cpu") &&
    echo "$shape median of $RUNS, $((BYTES >> 20)) MiB: reference $rs s (cpu $rc s), $((rk / 1024)) MiB | wc -l $ws s (cpu $wc s), $(mbps "$BYTES" "$ws") MB/s"
  for v in "${VARIANTS[@]}"; do
    ts=$(median <"$WORK/$v.s"); tk=$(median <"$WORK/$v.kib"); tc=$(median <"$WORK/$v.cpu")
    summary="$shape median of $RUNS: $v $ts s (cpu $tc s), $(mbps "$BYTES" "$ts") MB/s, $((tk / 1024)) MiB peak RSS"
    [ "$REF" = 1 ] && summary="$summary, $(awk -v a="$rs" -v b="$ts" 'BEGIN { printf "%.1f", a / b }')x faster than the reference (cpu $(awk -v a="$rc" -v b="$tc" 'BEGIN { printf "%.1f", a / b }')x)"
    echo "$summary, $(awk -v a="$ts" -v b="$ws" 'BEGIN { printf "%.1f", a / b }')x the time of wc -l"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
