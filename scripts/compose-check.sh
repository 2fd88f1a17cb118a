#!/usr/bin/env bash
# The production stack, checked as an operator runs it (docs/operations.md): brings
# docker-compose.yml up for real, waits for every health check, uses each service from the host
# as a client would, restarts each service and then the whole stack and checks that every piece
# of state survived, and ends with `down -v`. It starts with `down -v` too when an earlier run of
# its project was cut off before its cleanup.
#
# It runs under its own compose project name (COMPOSE_CHECK_PROJECT, default signet-infra-check)
# with its own settings file, so it never touches the volumes or the `.env` of a stack you run
# yourself; it does publish the same host ports (on 127.0.0.1), so stop such a stack first.
#
# Needs: a Docker engine with Compose v2, Node 22 or later (24 first) with this repository built (`pnpm build`: the
# check uses the config client and `ws` from the workspace). Where no container registry can be
# reached, the base images are built locally first (deploy/standins/build.sh; it needs
# debootstrap and BITCOIND pointing at a Bitcoin Core 29.2 bitcoind).
set -euo pipefail
cd "$(dirname "$0")/.."
export COMPOSE_PROJECT_NAME=${COMPOSE_CHECK_PROJECT:-signet-infra-check}
started=$(date +%s)

for tool in docker node; do
  command -v "$tool" >/dev/null || { echo "compose-check: $tool is not installed" >&2; exit 1; }
done
docker compose version >/dev/null 2>&1 || { echo "compose-check: Docker Compose v2 (docker compose) is not installed" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "compose-check: the Docker engine does not answer (is dockerd running?)" >&2; exit 1; }
[ -f packages/config-client/dist/cli.js ] || { echo "compose-check: build the workspace first (pnpm build)" >&2; exit 1; }

bash deploy/standins/build.sh

settings=$(mktemp)
cleanup() {
  local status=$?
  if [ "$status" -ne 0 ]; then
    echo "compose-check: failed; the services' last log lines:" >&2
    docker compose --env-file "$settings" logs --tail 30 --no-color >&2 || true
  fi
  docker compose --env-file "$settings" down -v --remove-orphans >/dev/null 2>&1 || true
  rm -f "$settings"
  echo "compose-check: done in $(($(date +%s) - started)) s (exit $status)"
  exit "$status"
}
trap cleanup EXIT
{
  echo "RELAY_PUBLISH_TOKEN=$(node -e "console.log(require('crypto').randomBytes(32).toString('hex'))")"
  echo "PUBLISH_ADDRESS=127.0.0.1"
} >"$settings"

# A check killed before its cleanup (a machine restarted mid-run) leaves its project's containers
# and volumes behind, and the next run would start on that state: the scanner's labels, the
# relay's log. The check's own project is taken down first, so every run starts from nothing.
project_volumes() { docker volume ls -q --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME"; }
project_leftovers() { docker compose --env-file "$settings" ps -aq 2>/dev/null; project_volumes; }
if [ -n "$(project_leftovers)" ]; then
  echo "compose-check: removing what an earlier run of project $COMPOSE_PROJECT_NAME left (containers and volumes)"
  docker compose --env-file "$settings" down -v --remove-orphans >/dev/null
  # and its volumes that this compose file does not declare (down -v leaves those)
  stale=$(project_volumes)
  [ -z "$stale" ] || docker volume rm $stale >/dev/null
  left=$(project_leftovers)
  [ -z "$left" ] || { echo "compose-check: could not remove what project $COMPOSE_PROJECT_NAME left: $left" >&2; exit 1; }
fi

echo "compose-check: building the images"
build_started=$(date +%s)
docker compose --env-file "$settings" build --quiet
echo "compose-check: images built in $(($(date +%s) - build_started)) s"

node scripts/compose-check.mjs --env-file "$settings"
