// The checks of scripts/compose-check.sh (which builds the images and cleans up): the stack is
// brought up, each service is used from the host as its clients use it, then each service is
// restarted, one container is recreated, and the whole stack goes down and up again; after each
// step every piece of state must still be there. Prints one line per check; exits 1 on the first
// failure with what was expected and what came back.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const requireFromWorkspace = createRequire(join(ROOT, 'packages', 'integration', 'package.json'));
const WebSocket = requireFromWorkspace('ws');

const { values } = parseArgs({ options: { 'env-file': { type: 'string' } } });
const ENV_FILE = values['env-file'];
const HOST = '127.0.0.1';
const WAIT_TIMEOUT_S = Number(process.env.COMPOSE_CHECK_WAIT_TIMEOUT ?? 300);
const APP_SERVICES = ['config-server', 'rpc-proxy', 'silent-payments', 'relay', 'storage'];

function compose(...args) {
  const run = spawnSync('docker', ['compose', ...(ENV_FILE ? ['--env-file', ENV_FILE] : []), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`docker compose ${args.join(' ')} failed (exit ${run.status}):\n${run.stderr}${run.stdout}`);
  return run.stdout;
}

function check(condition, what, detail) {
  if (!condition) throw new Error(`${what}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
  console.log(`ok    ${what}`);
}

async function step(name, fn) {
  const started = Date.now();
  console.log(`--    ${name}`);
  await fn();
  console.log(`      (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

const SERVICES_WITH_HEALTH = ['bitcoind', 'config-server', 'rpc-proxy', 'relay', 'silent-payments', 'storage', 'storage-gateway'];

/**
 * Every health check passing. Waited for, where `up --wait` gives up at once on a container that
 * is still unhealthy from a dependency's restart (the scanner while the node restarts) and an
 * operator would wait for the next check.
 */
async function allHealthy() {
  await until('every container is healthy', async () => SERVICES_WITH_HEALTH.every((service) => healthOf(service) === 'healthy'));
}

/**
 * `docker compose up -d` on a stack whose containers are all created anew, then every health
 * check passing. Never after a restart: `up` refuses to go on while a dependency is unhealthy
 * ("dependency failed to start"), and the proxy is, for a while, after the node's restart (a
 * Bitcoin Core 29 node's stop waits for the scanner's pending long poll, refusing calls meanwhile).
 */
async function upAndWait() {
  compose('up', '-d');
  await allHealthy();
}

async function http(method, url, body, headers = {}) {
  const response = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

/** GET over TLS with the server's certificate pinned by its SHA-256 fingerprint. */
function httpsGet(port, path, fingerprint) {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: HOST,
        port,
        path,
        rejectUnauthorized: false,
        checkServerIdentity: (_host, cert) =>
          cert.fingerprint256.replaceAll(':', '').toLowerCase() === fingerprint ? undefined : new Error('certificate fingerprint mismatch'),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode, text }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function logsOf(service) {
  return compose('logs', '--no-color', '--no-log-prefix', service)
    .split('\n')
    .flatMap((line) => {
      try {
        // Compose may put terminal control sequences before a line, even with --no-log-prefix.
        return [JSON.parse(line.slice(line.indexOf('{')))];
      } catch {
        return [];
      }
    });
}

// --- the state each check reads and the later checks compare with --------------------------
const state = {};

async function configServer() {
  const fingerprints = logsOf('config-server')
    .filter((l) => typeof l.sha256 === 'string')
    .map((l) => l.sha256.replaceAll(':', '').toLowerCase());
  check(fingerprints.length > 0, 'config-server logs its certificate fingerprint', 'no line with sha256');
  const fingerprint = fingerprints.at(-1);
  const key = compose('exec', '-T', 'config-server', 'node', 'dist/cli.js', 'key', 'dev').trim();
  check(/^[0-9a-f]{64}$/.test(key), 'config-server prints the dev environment key', key);
  if (state.configKey !== undefined)
    check(key === state.configKey, 'the dev key is the one from before', { before: state.configKey, now: key });
  if (state.configFingerprint !== undefined)
    check(fingerprint === state.configFingerprint, 'the TLS certificate is the one from before', {
      before: state.configFingerprint,
      now: fingerprint,
    });
  state.configKey = key;
  state.configFingerprint = fingerprint;

  const health = await httpsGet(6666, '/health', fingerprint);
  check(health.status === 200 && JSON.parse(health.text).status === 'healthy', 'config-server /health over pinned TLS', health);
  const client = spawnSync(
    process.execPath,
    [
      join(ROOT, 'packages/config-client/dist/cli.js'),
      'get',
      'dev/app.json',
      '--url',
      `https://${HOST}:6666`,
      '--key',
      key,
      '--fingerprint',
      fingerprint,
    ],
    { encoding: 'utf8' },
  );
  check(client.status === 0, 'the config client fetches and decrypts dev/app.json', client.stderr);
  const plain = JSON.parse(client.stdout);
  // storage/dev/app.json: a composite variable resolved; an undefined one kept as written.
  check(
    plain.database === 'postgres://wallet@127.0.0.1:5432/signet-wallet_dev' && plain.featureFlag === '${FEATURE_FLAG_NOT_DEFINED}',
    'the file came back with its placeholders substituted from the environment',
    client.stdout.slice(0, 300),
  );
}

async function rpcProxy() {
  const cookie = compose('exec', '-T', 'rpc-proxy', 'cat', '/data/.cookie').trim();
  check(cookie.startsWith('__cookie__:'), 'rpc-proxy wrote its cookie', cookie.slice(0, 11));
  const auth = `Basic ${Buffer.from(cookie).toString('base64')}`;
  const info = await http(
    'POST',
    `http://${HOST}:18443/`,
    { jsonrpc: '1.0', id: 'check', method: 'getblockchaininfo', params: [] },
    { Authorization: auth },
  );
  check(
    info.status === 200 && info.json?.result?.chain === 'signet',
    'rpc-proxy answers getblockchaininfo from the node (chain signet)',
    info.text,
  );
  const refused = await http(
    'POST',
    `http://${HOST}:18443/`,
    { jsonrpc: '1.0', id: 'x', method: 'getblockcount', params: [] },
    { Authorization: 'Basic eDp5' },
  );
  check(
    refused.status === 401 && refused.json?.error?.code === -1,
    'rpc-proxy refuses wrong credentials with 401 and code -1',
    refused.text,
  );
  const ready = await http('GET', `http://${HOST}:18443/ready`);
  check(ready.status === 200, 'rpc-proxy /ready', ready.text);
}

async function silentPayments() {
  const health = await http('GET', `http://${HOST}:8000/health`);
  check(health.status === 200 && health.json?.scanner !== undefined, 'silent-payments /health reports its scanner', health.text);
  console.log(`      scanner: ${JSON.stringify(health.json.scanner)}`);
  const ready = await http('GET', `http://${HOST}:8000/ready`);
  check(ready.status === 200, 'silent-payments /ready (the node is reachable through the proxy)', ready.text);
  const generated = await http('POST', `http://${HOST}:8000/generate-address`, { label: 'compose-check', amount: 0.001 });
  if (state.address === undefined) {
    check(
      generated.status === 201 && /^tsp1/.test(generated.json?.address ?? ''),
      'silent-payments hands out a tsp1 address',
      generated.text,
    );
    state.address = generated.json.address;
  } else {
    check(generated.status === 200 && generated.json?.address === state.address, 'the label gives the address it gave before', {
      before: state.address,
      now: generated.text,
    });
  }
}

function relayPing() {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${HOST}:8090`);
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error('no pong within 10 s'));
    }, 10_000);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'ping', id: 'check', timestamp: Date.now(), data: {} })));
    ws.on('message', (raw) => {
      const message = JSON.parse(String(raw));
      if (message.type !== 'pong') return;
      clearTimeout(timer);
      ws.close();
      resolve(message);
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

async function relay() {
  const pong = await relayPing();
  check(pong.id === 'check' && typeof pong.data?.relay_id === 'string', 'a WebSocket client of the relay gets pong', pong);
  const health = await http('GET', `http://${HOST}:8091/health`);
  check(health.status === 200 && health.json?.relay_id === pong.data.relay_id, 'relay /health names the same relay', health.text);
  if (state.relayId !== undefined)
    check(pong.data.relay_id === state.relayId, 'the relay id is the one from before', { before: state.relayId, now: pong.data.relay_id });
  state.relayId = pong.data.relay_id;
}

async function storage() {
  if (state.storageKey === undefined) {
    state.storageKey = randomBytes(32).toString('hex');
    state.storageValue = randomBytes(64).toString('hex');
    const stored = await http('POST', `http://${HOST}:8081/storage/store`, { key: state.storageKey, value: state.storageValue });
    check(stored.status === 200, 'storage stores a value through /storage/ on 8081', stored.text);
  }
  const read = await http('GET', `http://${HOST}:8081/storage/retrieve/${state.storageKey}`);
  check(
    read.status === 200 && read.json?.value === state.storageValue,
    'storage returns the stored value through /storage/ on 8081',
    read.text,
  );
}

/** The health status Docker reports for a service's container. */
function healthOf(service) {
  const id = compose('ps', '-q', service).trim();
  const run = spawnSync('docker', ['inspect', '--format', '{{.State.Health.Status}}', id], { encoding: 'utf8' });
  return run.stdout.trim();
}

/** Polls `condition` until it holds (then prints it as a passed check) or the wait times out. */
async function until(what, condition) {
  const deadline = Date.now() + WAIT_TIMEOUT_S * 1000;
  for (;;) {
    try {
      if (await condition()) break;
    } catch {
      // not yet: the service may be restarting
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${WAIT_TIMEOUT_S} s`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  console.log(`ok    ${what}`);
}

/**
 * The chain path back: the proxy reaches the node, and the scanner behind it has reached it again.
 * The scanner retries a failed node with backoff (up to 60 s between tries) and its /ready tells
 * its last try, so after the node or the proxy restarts it turns ready on its next try, which can
 * come after the proxy's own /ready.
 */
async function chainPathReady() {
  return (
    (await http('GET', `http://${HOST}:18443/ready`)).status === 200 && (await http('GET', `http://${HOST}:8000/ready`)).status === 200
  );
}

/** What answers once a service is back: the probe of the service itself as a client sees it. */
const PROBES = {
  'config-server': async () => (await httpsGet(6666, '/health', state.configFingerprint)).status === 200,
  'rpc-proxy': chainPathReady,
  bitcoind: chainPathReady,
  'silent-payments': async () => (await http('GET', `http://${HOST}:8000/ready`)).status === 200,
  relay: async () => (await http('GET', `http://${HOST}:8091/health`)).status === 200,
  storage: async () => (await http('GET', `http://${HOST}:8081/storage/health`)).status === 200,
  'storage-gateway': async () => (await http('GET', `http://${HOST}:8081/storage/health`)).status === 200,
};

/**
 * Waits until a restarted service answers its clients. `up --wait` alone is not enough: a
 * container's health status can still read healthy from before the restart for a moment.
 */
async function answering(service) {
  const deadline = Date.now() + WAIT_TIMEOUT_S * 1000;
  let last;
  for (;;) {
    try {
      if (await PROBES[service]()) return;
      last = 'not ready yet';
    } catch (err) {
      last = err.message;
    }
    if (Date.now() > deadline) throw new Error(`${service} does not answer after its restart: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function everything() {
  await configServer();
  await rpcProxy();
  await silentPayments();
  await relay();
  await storage();
}

await step('up: every health check passes', async () => upAndWait());
await step('each service used from the host', everything);
for (const service of [...APP_SERVICES, 'bitcoind', 'storage-gateway']) {
  await step(`docker compose restart ${service}: state kept`, async () => {
    compose('restart', service);
    await allHealthy();
    await answering(service);
    await everything();
  });
}
await step('node stopped: the proxy and the scanner say they are not ready, and the health checks fail', async () => {
  compose('stop', 'bitcoind');
  await until('rpc-proxy /ready answers 503', async () => (await http('GET', `http://${HOST}:18443/ready`)).status === 503);
  await until('silent-payments /ready answers 503', async () => (await http('GET', `http://${HOST}:8000/ready`)).status === 503);
  await until('the rpc-proxy container is reported unhealthy', async () => healthOf('rpc-proxy') === 'unhealthy');
  const ready = await http('GET', `http://${HOST}:18443/ready`);
  check(ready.json?.reason === 'node-unreachable', 'rpc-proxy /ready names the reason', ready.text);
  compose('start', 'bitcoind');
  // Not `up --wait`: it gives up at once on a container that is still unhealthy from the outage.
  await until('the rpc-proxy and silent-payments containers are healthy again', async () =>
    ['rpc-proxy', 'silent-payments'].every((service) => healthOf(service) === 'healthy'),
  );
  await answering('bitcoind');
  await answering('silent-payments');
  await rpcProxy();
});
await step('storage recreated (new container): the reverse proxy finds it again', async () => {
  compose('up', '-d', '--force-recreate', '--no-deps', 'storage');
  await allHealthy();
  await answering('storage');
  await storage();
});
await step('down and up again: state kept', async () => {
  compose('down');
  await upAndWait();
  for (const service of Object.keys(PROBES)) await answering(service);
  await everything();
});
console.log('compose-check: every check passed');
