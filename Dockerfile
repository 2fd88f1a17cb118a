# One image for the five services: the workspace is installed and built once, and each compose
# service runs its own app's entry point (`node apps/<app>/dist/main.js`).
FROM node:20-bookworm-slim AS build
WORKDIR /src
# better-sqlite3, secp256k1 and the BIP-352 scanner (packages/bip352/native) compile or load native
# code; the toolchain is only in this stage.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
RUN npm install -g pnpm@10.34.9
COPY . .
RUN pnpm install --frozen-lockfile && pnpm run build && pnpm prune --prod --config.ignore-scripts=true

FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0
WORKDIR /app
COPY --from=build /src /app
# Mount points of the named volumes, owned by the service user so fresh volumes are writable;
# the example environment seeds the config-storage volume on first start.
RUN mkdir -p /data /storage && cp -r /app/storage/. /storage/ && chown -R node:node /data /storage
USER node
