#!/usr/bin/env node
// One client must not lock everyone out: for each service (built apps, in this process), one
// address (127.0.0.2) opens as many slow connections as the service lets it (slow bodies on HTTP,
// idle TCP before the TLS handshake on the config server) while a second address (127.0.0.3)
// sends requests on fresh connections. Its p50 and p99 latency stand next to an idle run of the
// same requests (the reference), with the ratio. Writes bench-report.md next to package.json.
//
// Needs the apps built (`pnpm bench` at the root builds first). Run: node bench/hold.mjs [requests]
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const require = createRequire(import.meta.url);
const { createSilentLogger, listen, generateSelfSignedCertificate } = require('@repo/service');
const { holdSlowConnections, openConnection } = require('../dist/testing.js');
const fromApp = (name) => require(join(root, 'apps', name, 'dist', 'index.js'));
const WebSocket = createRequire(join(root, 'apps', 'relay', 'package.json'))('ws');

const REQUESTS = Number(process.argv[2] ?? 200);
const HOLDER = '127.0.0.2';
const CLIENT = '127.0.0.3';

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** One request on a fresh connection from CLIENT; resolves with ms, or -1 on failure/timeout. */
function probeHttp({ port, tls, method = 'GET', path, headers = {}, body }) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const request = tls ? httpsRequest : httpRequest;
    const req = request(
      { host: '127.0.0.1', port, method, path, headers, localAddress: CLIENT, agent: false, rejectUnauthorized: false, timeout: 5_000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode !== undefined && res.statusCode < 500 ? performance.now() - t0 : -1));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(-1));
    req.end(body);
  });
}

function probeWs({ port }) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const ws = new WebSocket(`ws://127.0.0.1:${port}`, { localAddress: CLIENT, handshakeTimeout: 5_000 });
    ws.once('open', () => {
      const ms = performance.now() - t0;
      ws.terminate();
      resolve(ms);
    });
    ws.once('error', () => resolve(-1));
  });
}

async function run(probe) {
  const times = [];
  let failed = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const ms = await probe();
    if (ms < 0) failed++;
    else times.push(ms);
  }
  times.sort((a, b) => a - b);
  return { p50: times.length ? percentile(times, 50) : NaN, p99: times.length ? percentile(times, 99) : NaN, failed };
}

/** Slow bodies first (the services cut them down to their body slots), then idle connections up to the cap. */
async function holdBoth(port, count, path, announced, extraHeaders) {
  const slow = await holdSlowConnections(port, count, HOLDER, path, announced, extraHeaders);
  const idle = await holdTcp(port, count);
  return [...slow.filter((s) => !s.destroyed), ...idle];
}

async function holdTcp(port, count) {
  const kept = [];
  for (let i = 0; i < count; i++) {
    const o = await openConnection(port, 5, HOLDER).catch(() => undefined);
    if (o && !o.closedAtOnce) {
      o.socket.on('error', () => undefined);
      kept.push(o.socket);
    }
  }
  await new Promise((r) => setTimeout(r, 100));
  return kept.filter((s) => !s.destroyed);
}

/** An app built by its createApp: started, listening on a free port, its /health the probe. */
async function served(app, server, hold, tls = false) {
  await app.start();
  const { port } = await listen(server, 0, '127.0.0.1');
  return {
    port,
    close: () => app.close(),
    count: () => app.connections.count(HOLDER),
    probe: () => probeHttp({ port, tls, path: '/health' }),
    hold: (n) => hold(port, n),
  };
}

const services = [
  {
    name: 'storage',
    cap: 'MAX_CONNECTIONS_PER_IP 256 of MAX_CONNECTIONS 4096',
    async start(dir) {
      const { createApp, loadConfig } = fromApp('storage');
      const app = createApp(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent' }), { logger: createSilentLogger() });
      return served(app, app.servers.http, (port, n) => holdBoth(port, n, '/storage/store', 100_000));
    },
    attempts: 300,
  },
  {
    name: 'rpc-proxy',
    cap: 'MAX_CONNECTIONS_PER_IP 32 of MAX_CONNECTIONS 125',
    async start(dir) {
      const { startChainDouble } = require(join(root, 'packages', 'chain-double', 'dist', 'index.js'));
      const node = await startChainDouble({ user: 'bench', password: 'benchpass', initialBlocks: 101, authFailureDelayMs: 0 });
      const { createApp, loadConfig } = fromApp('rpc-proxy');
      const config = loadConfig({
        DATA_DIR: dir,
        BITCOIND_RPC_URL: node.url,
        BITCOIND_RPC_USER: 'bench',
        BITCOIND_RPC_PASSWORD: 'benchpass',
        RPC_USER: 'alice',
        RPC_PASSWORD: 'alice-secret',
        RATE_LIMIT_PER_MINUTE: '0',
      });
      const app = createApp(config, { logger: createSilentLogger() });
      await app.start();
      const { port } = await listen(app.servers.http, 0, '127.0.0.1');
      const auth = `Basic ${Buffer.from('alice:alice-secret').toString('base64')}`;
      const body = '{"jsonrpc":"1.0","id":1,"method":"getblockcount","params":[]}';
      return {
        port,
        close: async () => {
          app.servers.http.closeAllConnections();
          await new Promise((r) => app.servers.http.close(r));
          await app.close();
          await node.close();
        },
        count: () => app.connections.count(HOLDER),
        probe: () =>
          probeHttp({
            port,
            method: 'POST',
            path: '/',
            headers: { Authorization: auth, 'Content-Type': 'application/json', 'Content-Length': body.length },
            body,
          }),
        hold: (n) => holdBoth(port, n, '/', 100_000, `Authorization: ${auth}\r\n`),
      };
    },
    attempts: 125,
  },
  {
    name: 'silent-payments',
    cap: 'MAX_CONNECTIONS_PER_IP 20 of MAX_CONNECTIONS 50',
    async start(dir) {
      const { createApp, loadConfig } = fromApp('silent-payments');
      const config = loadConfig({
        DATA_DIR: dir,
        SP_NETWORK: 'signet',
        SCANNER_ENABLED: 'false',
        CHAIN_RPC_URL: 'http://127.0.0.1:9',
        RATE_LIMIT_PER_MINUTE: '0',
      });
      const app = createApp(config, { logger: createSilentLogger() });
      return served(app, app.servers.http, (port, n) => holdBoth(port, n, '/generate-address', 1_000));
    },
    attempts: 50,
  },
  {
    name: 'relay HTTP',
    cap: 'MAX_HTTP_CONNECTIONS_PER_IP 20 of MAX_HTTP_CONNECTIONS 100',
    async start(dir) {
      const relay = await startRelay(dir);
      const port = relay.httpServer.address().port;
      return {
        ...relay,
        port,
        probe: () => probeHttp({ port, path: '/health' }),
        hold: (n) => holdBoth(port, n, '/sync', 100_000),
      };
    },
    attempts: 100,
  },
  {
    name: 'relay WebSocket',
    cap: 'MAX_WS_CONNECTIONS_PER_IP 100 of MAX_WS_CONNECTIONS 1000',
    async start(dir) {
      const relay = await startRelay(dir);
      const port = relay.wsServer.address().port;
      // Idle connections that never send their upgrade request (the listener answers a POST at once with 426).
      return { ...relay, port, probe: () => probeWs({ port }), hold: (n) => holdTcp(port, n) };
    },
    attempts: 150,
  },
  {
    name: 'config-server (TLS)',
    cap: 'MAX_CONNECTIONS_PER_IP 50 of MAX_CONNECTIONS 500',
    async start(dir) {
      const { createApp, loadConfig } = fromApp('config-server');
      mkdirSync(join(dir, 'storage', 'dev'), { recursive: true });
      writeFileSync(join(dir, 'storage', 'dev', 'app.conf'), 'x=1\n');
      const config = loadConfig({
        PORT: '0',
        DATA_DIR: join(dir, 'data'),
        STORAGE_DIR: join(dir, 'storage'),
        CONFIG_MASTER_KEY: '11'.repeat(32),
        RATE_LIMIT_PER_MINUTE: '0',
        RATE_LIMIT_PER_SECOND: '0',
        LOG_LEVEL: 'silent',
      });
      const tls = await generateSelfSignedCertificate(['localhost', '127.0.0.1']);
      const app = createApp(config, { logger: createSilentLogger(), tls });
      return served(app, app.servers.https, holdTcp, true);
    },
    attempts: 60,
  },
];

async function startRelay(dir) {
  const { createApp, loadConfig } = fromApp('relay');
  const config = loadConfig({
    HOST: '127.0.0.1',
    WS_PORT: '0',
    HTTP_PORT: '0',
    DATA_DIR: dir,
    RELAY_PUBLISH_TOKEN: 'publish-token-for-bench-0123456789',
    RELAY_MESH_TOKEN: 'mesh-token-for-bench-0123456789abcd',
    RATE_LIMIT_PER_MINUTE: '0',
  });
  const app = createApp(config, { logger: createSilentLogger() });
  await listen(app.servers.ws, 0, '127.0.0.1');
  await listen(app.servers.http, 0, '127.0.0.1');
  await app.start();
  return { httpServer: app.servers.http, wsServer: app.servers.ws, close: () => app.close() };
}

const fmt = (ms) => (Number.isFinite(ms) ? ms.toFixed(2) : 'n/a');
const rows = [];
for (const service of services) {
  const dir = mkdtempSync(join(tmpdir(), 'hold-bench-'));
  const running = await service.start(dir);
  try {
    await run(running.probe); // warm-up
    const idle = await run(running.probe);
    const held = await running.hold(service.attempts);
    // Open on the server when the run starts (the client's own view when the app does not count).
    const holding = running.count ? running.count() : held.length;
    const busy = await run(running.probe);
    for (const s of held) s.destroy();
    const row = {
      service: service.name,
      cap: service.cap,
      tried: service.attempts,
      held: holding,
      idle,
      busy,
      ratio: busy.p99 / idle.p99,
    };
    rows.push(row);
    console.log(
      `${row.service}: ${HOLDER} held ${row.held} of ${row.tried} tried; ${CLIENT} p99 ${fmt(busy.p99)} ms (idle ${fmt(idle.p99)} ms, ×${row.ratio.toFixed(2)}), failed ${busy.failed}/${REQUESTS}`,
    );
  } finally {
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const table = [
  `One address (${HOLDER}) holds as many connections as the service lets it: slow request bodies first (each service cuts those down to its bodies-at-once share), then idle connections that send nothing (slowloris) up to the per-address cap, all kept open until the header or body deadline; a second address (${CLIENT}) sends ${REQUESTS} requests, each on a new connection (a WebSocket handshake for the relay's WebSocket). Reference: the same requests with nobody holding.`,
  '',
  '| service | per-address cap (defaults) | connections tried / held open | idle p50 / p99 (ms) | held p50 / p99 (ms) | p99 ratio | failed while held |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  ...rows.map(
    (r) =>
      `| ${r.service} | ${r.cap} | ${r.tried} / ${r.held} | ${fmt(r.idle.p50)} / ${fmt(r.idle.p99)} | ${fmt(r.busy.p50)} / ${fmt(r.busy.p99)} | ${r.ratio.toFixed(2)} | ${r.busy.failed} / ${REQUESTS} |`,
  ),
  '',
];
writeFileSync(join(here, '..', 'bench-report.md'), `### Connection caps under a slow client (bench/hold.mjs)\n\n${table.join('\n')}`);
console.log(table.join('\n'));
