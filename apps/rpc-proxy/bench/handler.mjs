// The JSON-RPC handler's own CPU a call, in process (docs/performance/rpc-proxy.md, "Tenth
// round"): the handler of dist/ (npm run build first) with the proxy's authenticator, cache,
// coalescer, rate limiter (off), metrics and request log line (to stdout: run with >/dev/null),
// fed distinct `getblockhash` calls as the front end hands them over, 16 at a time; a fake node
// answers each turn's calls in the next. No sockets, no HTTP parsing: what the handler costs
// apart from them, for work on its per-call steps. Not part of `npm run bench`.
//
// node bench/handler.mjs >/dev/null   (BENCH_CALLS: calls, 300000; BENCH_DIST: another build's dist/)
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const dist = process.env.BENCH_DIST ?? join(import.meta.dirname, '..', 'dist');
const { createJsonRpcHandler } = require(join(dist, 'routes/json-rpc.js'));
const { FastRequest, FastResponse } = require(join(dist, 'fast-front.js'));
const { createAuthenticator } = require(join(dist, 'auth.js'));
const { createResultCache } = require(join(dist, 'cache.js'));
const { createCoalescer } = require(join(dist, 'coalesce.js'));
const { createProxyMetrics } = require(join(dist, 'metrics.js'));
const { DEFAULT_ALLOWED_METHODS } = require(join(dist, 'policy.js'));
const { createRateLimiter } = require('@repo/http');
const { createLogger } = require('@repo/service');

const CALLS = Number(process.env.BENCH_CALLS ?? 300_000);
const CONCURRENCY = 16;
const HASH = '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206';

/** A node that answers every call of a turn in the next one, each with its own id. */
function fakeNode(observe) {
  let pending = [];
  const answerAll = () => {
    const calls = pending;
    pending = [];
    for (const { body, resolve } of calls) {
      const id = /"id":(\d+)/.exec(body.toString())?.[1];
      observe(0.001, undefined);
      resolve({ status: 200, body: Buffer.from(`{"result":"${HASH}","error":null,"id":${id}}\n`) });
    }
  };
  const take = (body) =>
    new Promise((resolve) => {
      if (pending.length === 0) setImmediate(answerAll);
      pending.push({ body, resolve });
    });
  return {
    batches: { requests: 0, calls: 0 },
    stats: { active: 0, queued: 0, held: 0, maxActive: 0 },
    cookieError: () => undefined,
    close() {},
    call: (_path, body) => take(body),
    callBatched: (_path, body) => take(body),
  };
}

const auth = createAuthenticator({ cookie: 'bench', user: 'client', password: 'clientpass' });
const authorization = `Basic ${Buffer.from('client:clientpass').toString('base64')}`;
const cache = createResultCache(64 * 1024 * 1024);
const coalescer = createCoalescer();
let node;
const metrics = createProxyMetrics({ node: () => node, auth, cache, coalescer, front: () => undefined });
node = fakeNode(metrics.observeNode);
const handler = createJsonRpcHandler({
  logger: createLogger({ name: 'rpc-proxy', level: 'info' }),
  auth: metrics.auth,
  node,
  longPollNode: node,
  longPollMaxMs: 60_000,
  cache,
  coalescer,
  limiter: createRateLimiter({ perMinute: 0 }),
  allowedMethods: new Set(DEFAULT_ALLOWED_METHODS),
  userMethods: new Map(),
  maxBodyBytes: 32 * 1024 * 1024,
  maxConcurrentBodies: 8,
  authFailureDelayMs: 250,
  cacheMinConfirmations: 6,
  record: (req, status, seconds) => metrics.record(req, status, seconds),
});

const socket = { remoteAddress: '127.0.0.1', destroyed: false, writable: true };
let sent = 0;
let answered = 0;
let started = 0;
let cpu;

/** One call; its answer sends the next, in the turn after (16 in flight, as 16 connections). */
function send() {
  const n = sent++;
  const body = Buffer.from(`{"jsonrpc":"1.0","id":${n},"method":"getblockhash","params":[${n % 200}]}`);
  const headers = { host: '127.0.0.1:18443', authorization, 'content-type': 'application/json', 'content-length': String(body.length) };
  const res = new FastResponse({
    write(status) {
      if (status !== 200) throw new Error(`HTTP ${status}`);
      setImmediate(next);
      return true;
    },
  });
  handler(new FastRequest('POST', '/', headers, socket, body), res);
}

function next() {
  answered++;
  if (answered === CALLS) {
    const used = process.cpuUsage(cpu);
    const wall = performance.now() - started;
    process.stderr.write(
      `${CALLS} calls: ${((wall * 1000) / CALLS).toFixed(2)} µs wall, ${((used.user + used.system) / CALLS).toFixed(2)} µs CPU a call\n`,
    );
    process.exit(0);
  }
  if (sent < CALLS) send();
}

started = performance.now();
cpu = process.cpuUsage();
for (let i = 0; i < CONCURRENCY; i++) setImmediate(send);
