# The five services, each in its own small image (targets config-server, rpc-proxy,
# silent-payments, relay, storage). The workspace is installed and built once in `build`; each
# app is then laid out with its production dependencies only (`pnpm deploy`) and copied into a
# runtime image of its own.
FROM node:24-bookworm-slim AS build
# secp256k1 and the BIP-352 scanner (packages/bip352/native) compile native code (better-sqlite3
# loads the N-API prebuild shipped in its package) against the image's own Node headers (/usr/local/include/node): the build needs nothing but
# the npm registry and Debian's mirror. The toolchain stays in this stage.
ENV npm_config_nodedir=/usr/local CI=true
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
RUN npm install -g pnpm@10.34.9
WORKDIR /src
# Dependencies first (a layer that changes only with the lockfile), then the sources.
COPY pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN pnpm fetch
COPY . .
RUN pnpm install --frozen-lockfile --offline \
 && pnpm run build
# Each app with its production dependencies only, versions from the lockfile, workspace packages
# copied in (their `files`: dist); native addons come from the store's build cache.
RUN for app in config-server rpc-proxy silent-payments relay storage; do \
      pnpm --filter "@repo/$app" deploy --prod --offline --config.inject-workspace-packages=true "/out/$app" || exit 1; \
    done

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 DATA_DIR=/data
# The mount point of each service's state volume, owned by the service user so that a fresh named
# volume is writable.
RUN mkdir -p /data && chown node:node /data
WORKDIR /app
USER node
CMD ["node", "dist/main.js"]

FROM runtime AS config-server
COPY --from=build /out/config-server /app
# The example environments seed the config-storage volume on its first use.
COPY --from=build --chown=node:node /src/storage /storage
USER root
RUN chown node:node /storage
USER node

FROM runtime AS rpc-proxy
COPY --from=build /out/rpc-proxy /app

FROM runtime AS silent-payments
COPY --from=build /out/silent-payments /app

FROM runtime AS relay
COPY --from=build /out/relay /app

FROM runtime AS storage
COPY --from=build /out/storage /app
