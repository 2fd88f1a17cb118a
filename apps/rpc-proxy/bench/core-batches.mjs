// Bitcoin Core's own CPU per call by JSON-RPC batch size (docs/rpc-proxy.md, "Batching toward
// the node"): `getblockhash` with distinct heights, sent straight to a regtest node in batches of
// 1 to 64 calls by 4 and 16 concurrent HTTP clients, the node's CPU from /proc over each run. It
// says what a batch saves the node per call, which holding calls behind a batch in flight trades for waiting.
// BENCH_BATCH_METHOD=getwalletinfo sends wallet calls on /wallet/bench instead (a wallet of 100
// blocks' coinbases), whose cost at the node falls most with the batch's size
// (docs/performance/rpc-proxy.md, "Nineteenth round").
// A second table: one client sending batches one after the other, without a pause and with a
// pause of about 1 ms after each answer, the node's CPU a call split into user and system time:
// what a node left idle between batches pays to wake for each (docs/performance/rpc-proxy.md,
// "Twenty-fifth look").
// Needs Bitcoin Core 29 (BITCOIND or bitcoind on PATH) and Linux's /proc; prints one line otherwise.
// `node bench/core-batches.mjs` (BENCH_BATCH_CALLS: calls per run, default 40000).
import http from 'node:http';
import { processCpuTimes } from '@repo/metrics';
import { findBitcoind, startRegtestNode } from '@repo/regtest';

const CALLS = Number(process.env.BENCH_BATCH_CALLS ?? 40_000);
const METHOD = process.env.BENCH_BATCH_METHOD ?? 'getblockhash';
if (METHOD !== 'getblockhash' && METHOD !== 'getwalletinfo') {
  process.stderr.write('BENCH_BATCH_METHOD must be getblockhash (the default) or getwalletinfo\n');
  process.exit(2);
}
const WALLET = METHOD === 'getwalletinfo';
const PATH = WALLET ? '/wallet/bench' : '/';
/** The n-th call of a run: a distinct height, or the wallet call. */
const call = (n, id) =>
  WALLET
    ? `{"jsonrpc":"1.0","id":${id},"method":"getwalletinfo","params":[]}`
    : `{"jsonrpc":"1.0","id":${id},"method":"getblockhash","params":[${n % 100}]}`;
if (findBitcoind(process.env) === undefined) {
  process.stdout.write('core-batches benchmark not run: it needs Bitcoin Core 29.x (BITCOIND=/path/to/bitcoind or bitcoind on PATH)\n');
  process.exit(0);
}

const node = await startRegtestNode({ args: ['-rpcthreads=16', '-rpcworkqueue=64'] });
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
try {
  await node.rpc('createwallet', ['bench']);
  await node.rpc('generatetoaddress', [100, await node.rpc('getnewaddress', [], 'bench')]);
  const url = new URL(node.url);
  /** Sends one request; resolves with its answer's body when `keep`, rejects on any status but 200. */
  const post = (body, keep = false) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: PATH,
          method: 'POST',
          agent,
          headers: { authorization: node.authorization(), 'content-type': 'application/json' },
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            reject(new Error(`the node answered HTTP ${res.statusCode} on ${PATH}`));
            return;
          }
          let text = '';
          if (keep) res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
          else res.resume();
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  // Errors inside a batch come with HTTP 200: one batch checked before the runs, so a run never
  // times the node refusing the calls (a wallet not loaded, a height out of range).
  const check = JSON.parse(await post(`[${call(0, 0)},${call(1, 1)}]`, true));
  const refused = check.find((reply) => reply.error !== null);
  if (refused !== undefined) throw new Error(`the node refused ${METHOD} on ${PATH}: ${JSON.stringify(refused.error)}`);
  /**
   * Sends CALLS calls in batches of `size` from `clients` concurrent clients, each waiting ~1 ms
   * after every answer when `pause`; the node's CPU a call (user and system, µs) and calls/s.
   */
  const sendAll = async (size, clients, pause = false) => {
    let sent = 0;
    const before = processCpuTimes(node.pid);
    const started = performance.now();
    const client = async () => {
      while (sent < CALLS) {
        const n = Math.min(size, CALLS - sent);
        const calls = Array.from({ length: n }, (_, i) => call(sent + i, i));
        sent += n;
        await post(size === 1 ? calls[0] : `[${calls.join(',')}]`);
        if (pause) await new Promise((resolve) => setTimeout(resolve, 1));
      }
    };
    await Promise.all(Array.from({ length: clients }, client));
    const seconds = (performance.now() - started) / 1000;
    const after = processCpuTimes(node.pid);
    return { user: (after.user - before.user) / CALLS, system: (after.system - before.system) / CALLS, rate: Math.round(CALLS / seconds) };
  };
  const rows = [
    `${WALLET ? 'getwalletinfo on /wallet/bench' : 'getblockhash, distinct heights'}:`,
    '',
    '| calls a batch | HTTP clients | node CPU µs a call | calls/s |',
    '|---:|---:|---:|---:|',
  ];
  for (const size of [1, 4, 8, 16, 32, 64]) {
    for (const clients of [4, 16]) {
      const { user, system, rate } = await sendAll(size, clients);
      rows.push(`| ${size} | ${clients} | ${(user + system).toFixed(1)} | ${rate} |`);
    }
  }
  rows.push(
    '',
    'One client, batches one after the other, with and without a pause after each answer:',
    '',
    '| calls a batch | pause | node user µs a call | node system µs a call | calls/s |',
    '|---:|---|---:|---:|---:|',
  );
  for (const size of [4, 8, 16]) {
    for (const pause of [false, true]) {
      const { user, system, rate } = await sendAll(size, 1, pause);
      rows.push(`| ${size} | ${pause ? '~1 ms' : 'none'} | ${user.toFixed(1)} | ${system.toFixed(1)} | ${rate} |`);
    }
  }
  process.stdout.write(`${rows.join('\n')}\n`);
} finally {
  agent.destroy();
  await node.close();
}
