// npm run bench (second part): the proxy against real Bitcoin Core, beside direct Core and a bare
// node:http forwarder in the same run (issue 63, "The targets, restated"): throughput, p50 and p99
// at 16 connections, and what the proxy adds to direct Core's latency.
//
// Needs Bitcoin Core 29 (BITCOIND=/path/to/bitcoind, or bitcoind on PATH; @repo/regtest finds
// it); without it, prints one line and adds nothing. --append adds the tables to bench-report.md.
// BENCH_SECONDS (5), BENCH_ROUNDS (3): length of each run and interleaved rounds (median, range).
// BENCH_CONNECTIONS (16): client connections. BENCH_PAUSE_MS (2000): the pause before each measured
// run, so that what the run before it left behind does not count in it.
//
// The node runs with Bitcoin Core 29's defaults -rpcthreads=16 and -rpcworkqueue=64 (written
// out), -txindex=1; the proxy with its defaults. The bare forwarder (bench-servers.cjs) is a
// node:http server that sends each call to the node over undici and writes the answer back,
// with nothing else: what any proxy built on node:http costs here.
import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import autocannon from 'autocannon';
import { processCpuTimes } from '@repo/metrics';
import { bitcoindVersion, findBitcoind, startRegtestNode, createFundedWallet } from '@repo/regtest';

const here = dirname(fileURLToPath(import.meta.url));
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const WARM_UP_SECONDS = 2;
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 2000);
const NODE_ARGS = ['-rpcthreads=16', '-rpcworkqueue=64', '-rpcservertimeout=30'];
const CHAIN_HEIGHT = 200;
const append = process.argv.includes('--append');

const found = findBitcoind(process.env);
if (found === undefined) {
  const line = `rpc-proxy real-node benchmark not run: it needs Bitcoin Core 29.x (BITCOIND=/path/to/bitcoind or bitcoind on PATH)`;
  process.stdout.write(`${line}\n`);
  if (append) appendFileSync(join(here, '..', 'bench-report.md'), `\n${line}\n`);
  process.exit(0);
}

/** A bench server process (bench-servers.cjs), which says where it listens on stderr. */
function start(args) {
  const child = spawn(process.execPath, [join(here, 'bench-servers.cjs'), ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env },
  });
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stderr });
    rl.once('line', (line) => resolve({ child, info: JSON.parse(line) }));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
}

const auth = (u, p) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

/** One autocannon run of `bodyFor(n)` calls; the CPU µs a request of each process of `pids`. */
async function run(url, path, authorization, bodyFor, pids, duration = DURATION) {
  let n = 0;
  if (pids.length > 0) await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  const before = pids.map(processCpuTimes);
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    requests: [
      {
        method: 'POST',
        path,
        headers: { authorization, 'content-type': 'application/json' },
        setupRequest: (req) => ({ ...req, body: bodyFor(n++) }),
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || result.requests.total === 0)
    throw new Error(
      `${result.requests.total} answers, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts at ${url}${path}`,
    );
  const cpu = pids.map((p, i) => {
    const after = processCpuTimes(p);
    return (after.user - before[i].user + after.system - before[i].system) / result.requests.total;
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpu };
}

/** The reference row of each call, as the report names it (scripts/bench-references.mjs checks for it). */
const FORWARDER = 'bare forwarder (reference)';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const f = (v) => (Number.isNaN(v) ? '–' : (Math.round(v * 10) / 10).toString());
const cell = (xs) => (xs.length === 1 ? f(xs[0]) : `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`);

const node = await startRegtestNode({ bitcoind: found.path, args: NODE_ARGS });
const servers = [];
try {
  const wallet = await createFundedWallet(node, 'bench');
  await wallet.mine(CHAIN_HEIGHT - 101);
  // A transaction in the mempool: sending it again is a write Core answers with its txid.
  const { txid } = await wallet.fund(await wallet.newAddress(), 10_000n);
  const txHex = await node.rpc('getrawtransaction', [txid]);
  const proxy = await start([
    'proxy',
    node.url,
    JSON.stringify({ BITCOIND_COOKIE_FILE: node.cookieFile, BITCOIND_RPC_USER: null, BITCOIND_RPC_PASSWORD: null }),
  ]);
  servers.push(proxy);
  const forwarder = await start(['forwarder', node.url, node.authorization()]);
  servers.push(forwarder);
  const client = auth('client', 'clientpass');
  const cases = [
    ['getblockchaininfo (identical reads)', '/', (n) => `{"jsonrpc":"1.0","id":${n},"method":"getblockchaininfo","params":[]}`],
    ['getblockhash, distinct heights', '/', (n) => `{"jsonrpc":"1.0","id":${n},"method":"getblockhash","params":[${n % CHAIN_HEIGHT}]}`],
    [
      'getwalletinfo on /wallet/bench (a wallet call)',
      '/wallet/bench',
      (n) => `{"jsonrpc":"1.0","id":${n},"method":"getwalletinfo","params":[]}`,
    ],
    [
      'sendrawtransaction of a mempool tx (a write)',
      '/',
      (n) => `{"jsonrpc":"1.0","id":${n},"method":"sendrawtransaction","params":["${txHex}"]}`,
    ],
  ];
  const rows = [];
  for (const [name, path, bodyFor] of cases) {
    for (const url of [proxy.info.url, forwarder.info.url]) await run(url, path, client, bodyFor, [], WARM_UP_SECONDS);
    const direct = [];
    const proxied = [];
    const forwarded = [];
    for (let r = 0; r < ROUNDS; r++) {
      direct.push(await run(node.url, path, node.authorization(), bodyFor, [node.pid]));
      proxied.push(await run(proxy.info.url, path, client, bodyFor, [proxy.child.pid, node.pid]));
      forwarded.push(await run(forwarder.info.url, path, client, bodyFor, [forwarder.child.pid, node.pid]));
    }
    rows.push({ name, direct, proxied, forwarded });
  }
  const col = (runs, key) => runs.map((r) => r[key]);
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  const row = (direct, label, runs) =>
    `| | | ${label} | ${cell(col(runs, 'rps'))} | ${cell(runs.map((p, i) => (p.rps / direct[i].rps) * 100))} % | ${cell(col(runs, 'p50'))} | ${cell(runs.map((p, i) => p.p50 - direct[i].p50))} | ${cell(col(runs, 'p99'))} | ${cell(runs.map((p, i) => p.p99 - direct[i].p99))} | ${cell(runs.map((p) => p.cpu[0]))} | ${cell(runs.map((p) => p.cpu[1]))} |`;
  const lines = [
    `# rpc-proxy: the proxy, a bare forwarder and direct Core, real Bitcoin Core (${CONNECTIONS} connections, ${DURATION} s per run after a pause of ${PAUSE_MS / 1000} s, ${ROUNDS} interleaved rounds, ${new Date().toISOString()})`,
    '',
    `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average at the end ${load}; Node ${process.version}. Bitcoin Core ${bitcoindVersion(found.path) ?? '?'}, regtest, ${NODE_ARGS.join(' ')} -txindex=1; the proxy with its defaults.`,
    '',
    '| call | backend | to | req/s | of direct | p50 ms | added p50 ms | p99 ms | added p99 ms | server CPU µs/req | node CPU µs/req |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.flatMap(({ name, direct, proxied, forwarded }) => [
      `| ${name} | Core | direct | ${cell(col(direct, 'rps'))} | | ${cell(col(direct, 'p50'))} | | ${cell(col(direct, 'p99'))} | | | ${cell(direct.map((d) => d.cpu[0]))} |`,
      row(direct, 'proxy', proxied),
      row(direct, FORWARDER, forwarded),
    ]),
    '',
    "Targets (issue 63): throughput at least the bare forwarder's, added p50 ≤ 1 ms, added p99 ≤ 5 ms (added: over direct Core in",
    'the same round). The ratio to direct Core is reported, not targeted: on two shared cores it measures CPU contention.',
    '',
    '| call | proxy / bare forwarder | added p50 ms | added p99 ms |',
    '|---|---:|---:|---:|',
    ...rows.map(
      ({ name, direct, proxied, forwarded }) =>
        `| ${name} | ${cell(proxied.map((p, i) => (p.rps / forwarded[i].rps) * 100))} % | ${cell(proxied.map((p, i) => p.p50 - direct[i].p50))} | ${cell(proxied.map((p, i) => p.p99 - direct[i].p99))} |`,
    ),
    '',
    'Each round runs direct, proxy and forwarder one after the other; autocannon, the servers and the node share the cores.',
    '"server CPU" is the proxy\'s or the forwarder\'s; "node CPU" is Core\'s, per request.',
  ];
  const table = lines.join('\n');
  process.stdout.write(`${table}\n`);
  if (append) appendFileSync(join(here, '..', 'bench-report.md'), `\n${table}\n`);
  else writeFileSync(join(here, '..', 'bench-report-real-node.md'), `${table}\n`);
} finally {
  for (const s of servers) s.child.kill('SIGTERM');
  await Promise.all(servers.map((s) => new Promise((r) => (s.child.exitCode !== null ? r() : s.child.once('exit', r)))));
  await node.close();
}
