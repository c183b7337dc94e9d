#!/bin/sh
# Installs the reference implementation (@qwen-code/qwen-code@0.24.4) the
# conformance harness runs against, into tailproof's cache dir. Idempotent:
# does nothing when the package is already there. Needs node and npm.
set -eu
version=0.24.4
dir="${XDG_CACHE_HOME:-$HOME/.cache}/tailproof/qwen-code-$version"
pkg="$dir/node_modules/@qwen-code/qwen-code"
if [ -f "$pkg/package.json" ] && grep -q "\"version\": \"$version\"" "$pkg/package.json"; then
	exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "install.sh: npm not found" >&2; exit 1; }
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"private":true}' >"$dir/package.json"
# --ignore-scripts: the harness only imports the bundled JS; nothing needs building.
npm install --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel=error "@qwen-code/qwen-code@$version" >/dev/null
echo "$pkg"
