#!/usr/bin/env node
// `pnpm start` at the root: starts every service of the system as a child process on its own
// port with embedded defaults, prefixes each output line with the service name, and stops them
// all cleanly on Ctrl-C (SIGINT) or SIGTERM. Services are started in dependency order.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// Optional, for tests and side-by-side runs: every port shifted by START_ALL_PORT_OFFSET, and each
// service's state under START_ALL_DATA_ROOT/<service> instead of apps/<service>/data.
const offset = Number(process.env.START_ALL_PORT_OFFSET ?? 0);
if (!Number.isInteger(offset) || offset < 0 || offset > 40_000) {
  console.error('START_ALL_PORT_OFFSET must be an integer from 0 to 40000');
  process.exit(2);
}
const dataRoot = process.env.START_ALL_DATA_ROOT;
const port = (base) => base + offset;
const dataDir = (app) => (dataRoot ? join(dataRoot, app) : join(root, 'apps', app, 'data'));

/** A shared secret between services that need one, kept across restarts (mode 0600). */
function sharedSecret(name) {
  const dir = dataRoot ?? join(root, 'data');
  const path = join(dir, name);
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const value = randomBytes(32).toString('hex');
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  return value;
}

// The relay and the silent-payment service share the publisher token (and the mesh token).
const publishToken = process.env.RELAY_PUBLISH_TOKEN ?? sharedSecret('relay-publish-token');

// The silent-payment scanner reaches the chain through the proxy, with the cookie the proxy writes.
const proxyCookie = join(dataDir('rpc-proxy'), '.cookie');

const SERVICES = [
  { name: 'config-server', app: 'config-server', urls: [`https://localhost:${port(6666)}`], env: { PORT: port(6666) } },
  {
    name: 'storage',
    app: 'storage',
    urls: [`http://localhost:${port(8081)} (/storage/store, /storage/retrieve/<key>)`],
    env: { PORT: port(8081) },
  },
  {
    name: 'rpc-proxy',
    app: 'rpc-proxy',
    urls: [`http://localhost:${port(18443)} (cookie: ${proxyCookie})`],
    env: { PORT: port(18443) },
  },
  {
    name: 'relay',
    app: 'relay',
    urls: [`ws://localhost:${port(8090)}`, `http://localhost:${port(8091)}`],
    env: { WS_PORT: port(8090), HTTP_PORT: port(8091), RELAY_PUBLISH_TOKEN: publishToken },
  },
  {
    name: 'silent-payments',
    app: 'silent-payments',
    urls: [`http://localhost:${port(8000)}`],
    waitFor: proxyCookie,
    env: {
      PORT: port(8000),
      CHAIN_RPC_URL: `http://127.0.0.1:${port(18443)}`,
      CHAIN_RPC_COOKIE_FILE: proxyCookie,
      RELAY_URL: `ws://127.0.0.1:${port(8090)}`,
      RELAY_PUBLISH_TOKEN: publishToken,
    },
  },
];

const colours = [36, 35, 33, 32, 34, 31];
const children = [];
let stopping = false;

/** Resolves once `path` exists (a file another service writes at start), or after `ms`. */
async function waitForFile(path, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!existsSync(path) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

for (const [i, service] of SERVICES.entries()) {
  if (service.waitFor) await waitForFile(service.waitFor);
  if (stopping) break;
  const main = join(root, 'apps', service.app, 'dist', 'main.js');
  if (!existsSync(main)) {
    console.error(`${service.name}: ${main} is missing; run the build first (pnpm start builds)`);
    process.exit(1);
  }
  const child = spawn(process.execPath, [main], {
    cwd: join(root, 'apps', service.app),
    env: {
      ...process.env,
      DATA_DIR: dataDir(service.app),
      ...Object.fromEntries(Object.entries(service.env).map(([k, v]) => [k, String(v)])),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: Ctrl-C reaches only this launcher, which stops each service once.
    detached: true,
  });
  const tag = `\x1b[${colours[i % colours.length]}m${service.name.padEnd(16)}\x1b[0m|`;
  for (const stream of [child.stdout, child.stderr]) {
    let buffered = '';
    stream.on('data', (chunk) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop();
      for (const line of lines) process.stdout.write(`${tag} ${readable(line)}\n`);
    });
  }
  child.on('exit', (code, signal) => {
    process.stdout.write(`${tag} exited (${signal ?? code})\n`);
    if (!stopping) stopAll(1);
  });
  children.push(child);
}

console.log('\nStarting the system:');
for (const s of SERVICES) console.log(`  ${s.name.padEnd(16)} ${s.urls.join('  ')}`);
console.log('Ctrl-C stops everything.\n');

/** Turns a JSON log line into `level message key=value …`; other lines pass as they are. */
function readable(line) {
  let record;
  try {
    record = JSON.parse(line);
  } catch {
    return line;
  }
  const { level, time, msg, service, name, pid, hostname, ...rest } = record;
  const levelName = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' }[level] ?? level;
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`)
    .join(' ');
  return `${levelName} ${msg ?? ''} ${fields}`.trimEnd();
}

function stopAll(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  const deadline = setTimeout(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  }, 15_000);
  Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r))))).then(() => {
    clearTimeout(deadline);
    process.exit(code);
  });
}

process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));
// Should the launcher die some other way, its services must not outlive it.
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});
