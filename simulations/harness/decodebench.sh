#!/usr/bin/env bash
# decodebench.sh: the Codex and Claude codecs against the Qwen codec, side by
# side in one process (issue #15's target: each harness decodes at least as
# fast as Qwen's on every shape).
#
# Runs simulations/bench/peers' BenchmarkSideBySide COUNT times (default 7):
# per shape of simulations/bench/shape, each iteration reads the 16 MiB file
# of each harness from disk through events.Decode and the harness's codec —
# the same loop for the three, the reader the CLI reads Codex and Claude
# sessions with, fused where the codec offers it (events.FusedCodec; not
# Qwen's) — one after the other, the first one rotating, and takes each
# decode's process CPU time. FRAMED=1 runs BenchmarkSideBySideFramed
# instead: every line framed first, so the codecs' DecodeLine alone are
# compared. A run reports
# each harness's MB per CPU-second and the median over its rounds of Codex's
# and Claude's figure over Qwen's in the same round (codex/qwen,
# claude/qwen): alternating per 16 MiB, a change in load falls on the three
# alike, and the paired ratio cancels most of it. Prints every run to
# $OUT/runs.txt, then per shape and figure the median over the COUNT runs
# and their spread (min-max), and the load average before and after.
#
#   simulations/harness/decodebench.sh [COUNT]
#
# BENCHTIME (default 40x: 40 rounds of three decodes per shape and run) is
# passed to -test.benchtime; OUT (default a temp dir) keeps the binary and
# runs.
set -euo pipefail
count=${1:-7}
benchtime=${BENCHTIME:-40x}
out=${OUT:-$(mktemp -d)}
cd "$(dirname "$0")/../.."
go test -c -o "$out/peers.test" ./simulations/bench/peers
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$out/peers.test" -test.run '^$' -test.bench "^BenchmarkSideBySide${FRAMED:+Framed}$" -test.benchtime "$benchtime" -test.cpu 1 \
	-test.count "$count" | tee "$out/bench.txt" |
	awk '/^BenchmarkSideBySide\// { s = $1; sub("BenchmarkSideBySide/", "", s); for (i = 4; i < NF; i++) if ($(i+1) ~ /\/qwen$|MB\/cpu-s$/) print s, $(i+1), $i }' >"$out/runs.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: $out/runs.txt ($count runs, -benchtime $benchtime, -cpu 1)"
echo "median over the runs (min-max)"
sort -k1,1 -k2,2 -k3,3g "$out/runs.txt" | awk '
	{ k = $1 " " $2; v[k, ++n[k]] = $3; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k } }
	END {
		for (j = 1; j <= nk; j++) {
			k = keys[j]; c = n[k]
			m = c % 2 ? v[k, (c + 1) / 2] : (v[k, c / 2] + v[k, c / 2 + 1]) / 2
			split(k, f, " ")
			if (f[2] ~ /\/qwen$/) printf "%-6s %-16s %7.3f  (%.3f-%.3f, n=%d)\n", f[1], f[2], m, v[k, 1], v[k, c], c
			else printf "%-6s %-16s %7.0f  (%.0f-%.0f, n=%d)\n", f[1], f[2], m, v[k, 1], v[k, c], c
		}
	}'
