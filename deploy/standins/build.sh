#!/usr/bin/env bash
# Makes sure the three base images the production files name exist locally:
#   node:24-bookworm-slim  (Dockerfile)   bitcoin/bitcoin:29.2 and nginx:1.27-alpine (docker-compose.yml)
# An image already present is kept; otherwise it is pulled; where no registry answers, a stand-in
# is built under the same name from Debian packages (debootstrap) and, for the node, the Bitcoin
# Core binaries named by BITCOIND (bitcoin-cli beside it). The stand-ins are for testing the
# production files on a machine without registry access; they are never used by those files
# directly. See README.md in this folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${STANDIN_CACHE:-/var/cache/signet-standins}
suite=bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

log() { printf 'standins: %s\n' "$*" >&2; }

# The names come from the production files themselves, so a stand-in can never drift from them.
node_image=$(sed -n 's/^FROM \([^ ]*\) AS build$/\1/p' "$root/Dockerfile" | head -1)
bitcoin_image=$(sed -n 's/^ *image: \(bitcoin\/bitcoin:[^ ]*\)$/\1/p' "$root/docker-compose.yml" | head -1)
nginx_image=$(sed -n 's/^ *image: \(nginx:[^ ]*\)$/\1/p' "$root/docker-compose.yml" | head -1)
for name in node_image bitcoin_image nginx_image; do
  [ -n "${!name}" ] || { log "could not read $name from the production files"; exit 1; }
done

have() { docker image inspect "$1" >/dev/null 2>&1; }
pull() { timeout "${STANDIN_PULL_TIMEOUT:-45}" docker pull -q "$1" >/dev/null 2>&1; }

base() {
  have standin-base:$suite && return 0
  if [ ! -x "$cache/rootfs-$suite/bin/sh" ]; then
    command -v debootstrap >/dev/null || { log "debootstrap is needed (apt-get install debootstrap)"; exit 1; }
    log "debootstrap $suite (minbase) into $cache/rootfs-$suite"
    rm -rf "$cache/rootfs-$suite.tmp"
    mkdir -p "$cache"
    debootstrap --variant=minbase "$suite" "$cache/rootfs-$suite.tmp" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
      { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
    mv "$cache/rootfs-$suite.tmp" "$cache/rootfs-$suite"
  fi
  tar -C "$cache/rootfs-$suite" -c . | docker import - standin-base:$suite >/dev/null
}

build_node() {
  local node prefix ctx
  node=$(readlink -f "$(command -v node)")
  prefix=$(dirname "$(dirname "$node")")
  # The stand-in must carry the line its tag names (node:24-… gets Node 24): put that line's node
  # first on PATH (scripts/install-node.sh installs one from the npm registry).
  local want have_major
  want=$(printf '%s' "$node_image" | sed -n 's/^node:\([0-9]*\)-.*/\1/p')
  have_major=$("$node" --version | sed 's/^v\([0-9]*\).*/\1/')
  [ "$want" = "$have_major" ] || { log "$node_image needs Node $want first on PATH, found $("$node" --version) ($node)"; exit 1; }
  [ -f "$prefix/include/node/node_api.h" ] || { log "Node's headers are not beside $node ($prefix/include/node)"; exit 1; }
  [ -d "$prefix/lib/node_modules/npm" ] || { log "npm is not beside $node ($prefix/lib/node_modules/npm)"; exit 1; }
  ctx=$(mktemp -d)
  cp "$node" "$ctx/node"
  cp -r "$prefix/lib/node_modules/npm" "$ctx/npm"
  cp -r "$prefix/include/node" "$ctx/include"
  if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then cp "$NODE_EXTRA_CA_CERTS" "$ctx/extra-ca.crt"; else : >"$ctx/extra-ca.crt"; fi
  cp "$here/node/Dockerfile" "$ctx/"
  docker build -q -t "$node_image" "$ctx" >/dev/null
  rm -rf "$ctx"
}

build_bitcoin() {
  local bitcoind=${BITCOIND:-$(command -v bitcoind || true)} ctx
  [ -n "$bitcoind" ] && [ -x "$bitcoind" ] || { log "set BITCOIND to a Bitcoin Core 29.2 bitcoind (bitcoin-cli beside it)"; exit 1; }
  [ -x "$(dirname "$bitcoind")/bitcoin-cli" ] || { log "bitcoin-cli is not beside $bitcoind"; exit 1; }
  ctx=$(mktemp -d)
  cp "$bitcoind" "$(dirname "$bitcoind")/bitcoin-cli" "$here/bitcoin/entrypoint.sh" "$here/bitcoin/Dockerfile" "$ctx/"
  docker build -q -t "$bitcoin_image" "$ctx" >/dev/null
  rm -rf "$ctx"
}

build_nginx() { docker build -q -t "$nginx_image" "$here/nginx" >/dev/null; }

for kind in node bitcoin nginx; do
  var=${kind}_image
  image=${!var}
  if have "$image"; then log "$image: present"; continue; fi
  if [ "${STANDIN_NO_PULL:-}" != 1 ] && pull "$image"; then log "$image: pulled"; continue; fi
  base
  log "$image: no registry answered; building the stand-in"
  "build_$kind"
  log "$image: stand-in built"
done
