// npm run bench: requests/second and p50/p99 latency at 50 connections, through the proxy
// and straight to the chain double, in the same run (issue 4 "Benchmark"), with the CPU time
// each server process spent per request (from /proc, Linux only).
//
// BENCH_SECONDS (5): length of each measured run. BENCH_ROUNDS (1): direct, proxy and
// uncoalesced proxy (a second proxy process with RPC_COALESCE=false) runs are repeated,
// interleaved, this many times; the table gives the median and the range.
// BENCH_NODE_LATENCY_MS (0): the double waits this long before each answer (a node's service
// time); the proxies then get NODE_MAX_CONCURRENCY=50, the concurrency the direct runs get
// from the double (which has no thread limit), so both sides wait on the same node.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import autocannon from 'autocannon';
import { processCpuMicros } from '@repo/metrics';

const here = dirname(fileURLToPath(import.meta.url));
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const LATENCY_MS = Number(process.env.BENCH_NODE_LATENCY_MS ?? 0);
const CONNECTIONS = 50;
const WARM_UP_SECONDS = 2;
const PROXY_ENV = LATENCY_MS > 0 ? { NODE_MAX_CONCURRENCY: String(CONNECTIONS) } : {};

function start(args, stream) {
  const child = spawn(process.execPath, [join(here, 'bench-servers.cjs'), ...args], {
    stdio: ['ignore', stream === 'stdout' ? 'pipe' : 'ignore', stream === 'stderr' ? 'pipe' : 'inherit'],
    env: { ...process.env },
  });
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child[stream] });
    rl.once('line', (line) => resolve({ child, info: JSON.parse(line) }));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
}

const auth = (u, p) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

/** One autocannon run against `url`; CPU µs/req of `server` (the process answering) and of the double. */
async function run(url, authorization, body, server, duration = DURATION) {
  const procs = server === double ? [double] : [server, double];
  const before = procs.map((p) => processCpuMicros(p.child.pid));
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors for ${body}`);
  const cpu = procs.map((p, i) => (processCpuMicros(p.child.pid) - before[i]) / result.requests.total);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    proxyCpu: procs.length === 2 ? cpu[0] : Number.NaN,
    doubleCpu: cpu[procs.length - 1],
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const f = (n) => (Number.isNaN(n) ? '–' : (Math.round(n * 10) / 10).toString());
const cell = (xs) => (xs.length === 1 ? f(xs[0]) : `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`);

const double = await start(['double'], 'stdout');
const proxy = await start(['proxy', double.info.url, JSON.stringify(PROXY_ENV)], 'stderr');
const uncoalesced = await start(['proxy', double.info.url, JSON.stringify({ ...PROXY_ENV, RPC_COALESCE: 'false' })], 'stderr');
const TARGETS = [
  ['direct', double, auth('bench', 'benchpass')],
  ['proxy', proxy, auth('client', 'clientpass')],
  ['proxy, RPC_COALESCE=false', uncoalesced, auth('client', 'clientpass')],
];
try {
  const hash = double.info.hash;
  const cases = [
    ['getblockchaininfo', { jsonrpc: '1.0', id: 'b', method: 'getblockchaininfo', params: [] }],
    ['getblock (verbosity 1)', { jsonrpc: '1.0', id: 'b', method: 'getblock', params: [hash, 1] }],
    ['getblock (verbosity 0, cached by the proxy)', { jsonrpc: '1.0', id: 'b', method: 'getblock', params: [hash, 0] }],
    [
      `getblock (verbosity 0, cached by the proxy), a ${(double.info.bigBytes / 1e6).toFixed(2)} MB block`,
      { jsonrpc: '1.0', id: 'b', method: 'getblock', params: [double.info.bigHash, 0] },
    ],
  ];
  const rows = [];
  for (const [name, call] of cases) {
    const body = JSON.stringify(call);
    // Warm-up of both proxies (JIT, keep-alive pool, cache).
    for (const [, server, authorization] of TARGETS.slice(1)) await run(server.info.url, authorization, body, server, WARM_UP_SECONDS);
    const runs = TARGETS.map(() => []);
    // Interleaved rounds: direct, proxy, uncoalesced proxy, again.
    for (let r = 0; r < ROUNDS; r++) {
      for (const [t, [, server, authorization]] of TARGETS.entries()) runs[t].push(await run(server.info.url, authorization, body, server));
    }
    rows.push({ name, runs });
  }
  const col = (runs, key) => runs.map((r) => r[key]);
  const lines = [
    `# rpc-proxy benchmark (${CONNECTIONS} connections, ${DURATION} s per run, ${ROUNDS} round(s), node service time ${LATENCY_MS} ms, loopback, ${new Date().toISOString()})`,
    '',
    '| call | to | req/s | of direct | p50 ms | added p50 ms | p99 ms | proxy CPU µs/req | double CPU µs/req |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.flatMap(({ name, runs }) =>
      runs.map((target, t) => {
        const direct = runs[0];
        const ratio = target.map((p, i) => (p.rps / direct[i].rps) * 100);
        const added = target.map((p, i) => p.p50 - direct[i].p50);
        const [label] = TARGETS[t];
        return `| ${t === 0 ? name : ''} | ${label} | ${cell(col(target, 'rps'))} | ${t === 0 ? '' : `${cell(ratio)} %`} | ${cell(col(target, 'p50'))} | ${t === 0 ? '' : cell(added)} | ${cell(col(target, 'p99'))} | ${t === 0 ? '' : cell(col(target, 'proxyCpu'))} | ${cell(col(target, 'doubleCpu'))} |`;
      }),
    ),
    '',
    'Targets (issue 4): proxy ≥ 85 % of direct throughput, ≤ 1 ms added p50, cached getblock faster than direct.',
    'Every run sends one identical body from all connections: the case in-flight coalescing serves (the default);',
    'the RPC_COALESCE=false rows are a second proxy process that sends every call to the node.',
    'The double, the proxies and autocannon each run in their own process on the same machine; CPU µs/req is the',
    'CPU time the process used during the run divided by the requests answered (from /proc).',
    ...(LATENCY_MS > 0
      ? [`The double waits ${LATENCY_MS} ms before each answer; the proxies run with NODE_MAX_CONCURRENCY=${CONNECTIONS}.`]
      : []),
  ];
  const table = lines.join('\n');
  process.stdout.write(`${table}\n`);
  writeFileSync(join(here, '..', 'bench-report.md'), `${table}\n`);
} finally {
  for (const p of [double, proxy, uncoalesced]) p.child.kill();
}
