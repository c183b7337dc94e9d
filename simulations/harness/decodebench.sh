#!/usr/bin/env bash
# decodebench.sh: the Codex and Claude codecs against the Qwen codec, side by
# side on the same machine in one run (issue #15's target: each harness
# decodes at least as fast as Qwen's on every shape).
#
# Builds the three packages' test binaries once, then runs their
# BenchmarkDecode (16 MiB per shape of simulations/bench/shape, -cpu 1, MB per
# CPU-second) in alternation, COUNT rounds (default 7), so a change in the
# machine's load falls on all three alike; prints every run's figures to
# $OUT/runs.txt and the median of each cell, with its spread (min–max), and
# the load average before and after. Medians, not means: a loaded machine's
# outliers are one-sided.
#
#   simulations/harness/decodebench.sh [COUNT]
#
# BENCHTIME (default 10x) is passed to -test.benchtime; OUT (default a temp
# dir) keeps the binaries and runs.
set -euo pipefail
count=${1:-7}
benchtime=${BENCHTIME:-10x}
out=${OUT:-$(mktemp -d)}
cd "$(dirname "$0")/../.."
for p in qwen codex claude; do
	go test -c -o "$out/$p.test" "./events/$p"
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$out/runs.txt"
for ((r = 1; r <= count; r++)); do
	for p in qwen codex claude; do
		"$out/$p.test" -test.run '^$' -test.bench '^BenchmarkDecode$' -test.benchtime "$benchtime" -test.cpu 1 |
			awk -v p="$p" '/^BenchmarkDecode\// { for (i = 1; i <= NF; i++) if ($(i+1) == "MB/cpu-s") print p, $1, $i }' >>"$out/runs.txt"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: $out/runs.txt ($count rounds, -benchtime $benchtime, -cpu 1)"
echo "median MB per CPU-second (min-max)"
sort -k1,1 -k2,2 -k3,3n "$out/runs.txt" | awk '
	{ k = $1 " " $2; v[k, ++n[k]] = $3; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k } }
	END {
		for (j = 1; j <= nk; j++) {
			k = keys[j]; c = n[k]
			m = c % 2 ? v[k, (c + 1) / 2] : (v[k, c / 2] + v[k, c / 2 + 1]) / 2
			split(k, f, " "); sub("BenchmarkDecode/", "", f[2])
			printf "%-7s %-6s %7.0f  (%.0f-%.0f, n=%d)\n", f[1], f[2], m, v[k, 1], v[k, c], c
		}
	}'
