#!/usr/bin/env bash
# Benchmark: reconcile a large Qwen transcript whose last prompt was left
# in_flight, with tailproof and with Qwen Code 0.24.4's own reconciler, on
# the same files. Prints wall time and peak RSS for each.
#
#   simulations/bench/reconcile.sh [MB]        (default 600)
#
# Needs: go; for the reference, node and @qwen-code/qwen-code@0.24.4
# (simulations/conformance/install.sh, or set QWEN_PKG to the package dir).
set -euo pipefail
cd "$(dirname "$0")/../.."
MB="${1:-600}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
SID=b0000000-0000-4000-8000-000000000600
CWD=/bench/workspace

go build -o "$WORK/tailproof" ./cmd/tailproof
go run ./simulations/bench/gen -dir "$WORK/tp" -mb "$MB"
cp -r "$WORK/tp" "$WORK/ref"

measure() { # label, command...
  local label="$1"; shift
  /usr/bin/time -f "$label: %e s wall, %M KiB peak RSS" "$@" 2>&1 >/dev/null | tail -1
}
sync
measure "tailproof reconcile" "$WORK/tailproof" reconcile --qwen-runtime "$WORK/tp" --cwd "$CWD" --session "$SID" --now 1900000000000
"$WORK/tailproof" reconcile --qwen-runtime "$WORK/tp" --cwd "$CWD" --session "$SID" --dry-run --json >/dev/null
tail -1 "$WORK/tp/projects/-bench-workspace/chats/$SID.ledger.jsonl"

PKG="${QWEN_PKG:-}"
for c in "$HOME/.cache/tailproof/qwen-code-0.24.4/node_modules/@qwen-code/qwen-code" /tmp/qwenref/node_modules/@qwen-code/qwen-code; do
  [ -z "$PKG" ] && [ -d "$c" ] && PKG="$c"
done
if [ -n "$PKG" ] && command -v node >/dev/null; then
  measure "reference (Qwen Code 0.24.4)" node --max-old-space-size=8192 simulations/bench/reference.mjs "$PKG" "$WORK/ref" "$CWD" "$SID"
  tail -1 "$WORK/ref/projects/-bench-workspace/chats/$SID.ledger.jsonl"
else
  echo "reference: skipped (node or @qwen-code/qwen-code@0.24.4 not found)"
fi
