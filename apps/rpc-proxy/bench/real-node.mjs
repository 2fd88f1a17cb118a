// npm run bench (second part): calls the proxy cannot merge (distinct parameters, a wallet
// call, a write) against real Bitcoin Core, straight to the node and through the proxy,
// interleaved in one run, with the same calls against the chain double beside them
// (docs/rpc-proxy.md, "Coalescing": only identical reads in flight are merged).
//
// Needs Bitcoin Core 29 (BITCOIND=/path/to/bitcoind, or bitcoind on PATH; @repo/regtest finds
// it); without it, prints one line and adds nothing. --append adds the table to bench-report.md.
// BENCH_SECONDS (5), BENCH_ROUNDS (3): length of each run and interleaved rounds (median, range).
// BENCH_CONNECTIONS (16): client connections. BENCH_PROXY_NODE_ARGS: node options of the proxy
// process (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"; the proxy exits cleanly at the end).
//
// The node runs with the settings of a production node: Bitcoin Core 29's defaults
// -rpcthreads=16 and -rpcworkqueue=64 (written out), -txindex=1, -rpcservertimeout=30; the proxy
// with its defaults, NODE_MAX_CONCURRENCY=16 (one connection per Core RPC thread).
// BENCH_COMPARE_DIST: the absolute path of another build of the proxy (a copy of dist/ inside
// this package, e.g. node_modules/.ab-base): a second proxy in front of Core runs from it, and
// each Core round runs it too, after and before the proxy of dist/ in turn (an A/B of two builds
// in one run). BENCH_COMPARE_ENV: JSON of settings for that second proxy only (an A/B of a
// setting, e.g. '{"NODE_BATCHES_IN_FLIGHT":"1"}' against BENCH_PROXY_ENV's).
// BENCH_PAUSE_MS (2000): the pause before each measured run. Without it the run right after the
// direct one cost the proxy and Core more CPU a call, for two to three seconds, than the same
// build's run after it (6 rounds of 6; docs/performance/rpc-proxy.md, "Sixteenth round").
// Each Core row also has the bare forwarder (bench-servers.cjs): a node:http server that sends
// each call to the node over undici and writes the answer back, with nothing else; it shows what
// any proxy built on node:http costs here, whatever it does per call. And the bare batching
// proxy (the ceiling): bare sockets both ways, each path's calls batched as the proxy batches
// them, nothing else; what a proxy reaches here when everything it does per call costs nothing.
// Between the two, the proxy's own front end and node client alone (bench-servers.cjs layers):
// each call handed from one to the other with none of the handler's per-call work.
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

/** A bench server process (bench-servers.cjs); the double says where it listens on stdout, the proxy on stderr. */
function start(args, extraNodeArgs = [], env = {}) {
  const stream = args[0] === 'double' ? 'stdout' : 'stderr';
  const child = spawn(process.execPath, [...extraNodeArgs, join(here, 'bench-servers.cjs'), ...args], {
    stdio: ['ignore', stream === 'stdout' ? 'pipe' : 'ignore', stream === 'stderr' ? 'pipe' : 'inherit'],
    env: { ...process.env, ...env },
  });
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child[stream] });
    rl.once('line', (line) => resolve({ child, info: JSON.parse(line) }));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
}

const auth = (u, p) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

/**
 * One autocannon run; `bodyFor(n)` gives the n-th call's body (distinct parameters). CPU µs/req of
 * `pids` and of this process (autocannon, the client). A measured run (`pids` given) starts after
 * BENCH_PAUSE_MS, so that what the run before it left behind does not count in it.
 */
async function run(url, path, authorization, bodyFor, pids, duration = DURATION) {
  let n = 0;
  if (pids.length > 0) await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  const before = pids.map(processCpuTimes);
  const clientBefore = process.cpuUsage();
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
  const client = process.cpuUsage(clientBefore);
  const splits = pids.map((p, i) => splitOf(processCpuTimes(p), before[i], result.requests.total));
  // A server that answered nothing (its calls all timed out) fails the run, not a row of zeros.
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || result.requests.total === 0)
    throw new Error(
      `${result.requests.total} answers, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts at ${url}${path}`,
    );
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpu: splits.map((s) => s.user + s.system),
    // The first process's CPU a request split: its own code (user) and the kernel's for it (system).
    split: splits[0],
    client: (client.user + client.system) / result.requests.total,
  };
}

/** User and system µs a request between two readings of processCpuTimes (NaN where /proc could not be read). */
const splitOf = (after, before, requests) => ({
  user: (after.user - before.user) / requests,
  system: (after.system - before.system) / requests,
});

/** The reference rows of a call against Core, as the report names them (scripts/bench-references.mjs checks for them). */
const FORWARDER = 'bare forwarder (reference)';
const LAYERS = "the proxy's front end and node client alone";
const CEILING = 'bare batching proxy (ceiling)';

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
  const double = await start(['double']);
  servers.push(double);
  // BENCH_PROXY_ENV: JSON of extra proxy settings (experiments: {"LOG_LEVEL":"warn"}).
  const proxyEnv = JSON.parse(process.env.BENCH_PROXY_ENV ?? '{}');
  const profiled = (process.env.BENCH_PROXY_NODE_ARGS ?? '').split(' ').filter(Boolean);
  /** The arguments of a proxy in front of Core with `env` on top of the bench's settings. */
  const coreProxyArgs = (env) => [
    'proxy',
    node.url,
    JSON.stringify({ BITCOIND_COOKIE_FILE: node.cookieFile, BITCOIND_RPC_USER: null, BITCOIND_RPC_PASSWORD: null, ...proxyEnv, ...env }),
  ];
  const coreProxy = await start(coreProxyArgs({}), profiled);
  servers.push(coreProxy);
  const compareDist = process.env.BENCH_COMPARE_DIST;
  const compareProxy = compareDist
    ? await start(coreProxyArgs(JSON.parse(process.env.BENCH_COMPARE_ENV ?? '{}')), [], { BENCH_PROXY_DIST: compareDist })
    : undefined;
  if (compareProxy) servers.push(compareProxy);
  const doubleProxy = await start(['proxy', double.info.url, JSON.stringify(proxyEnv)]);
  servers.push(doubleProxy);
  const forwarder = await start(['forwarder', node.url, node.authorization()]);
  servers.push(forwarder);
  const ceiling = await start(['ceiling', node.url, node.authorization()]);
  servers.push(ceiling);
  const layers = await start(['layers', node.url, node.cookieFile]);
  servers.push(layers);
  const client = auth('client', 'clientpass');
  const corePid = node.pid;
  const getblockhash = (n) => `{"jsonrpc":"1.0","id":${n},"method":"getblockhash","params":[${n % CHAIN_HEIGHT}]}`;
  const doubleHeight = double.info.height;
  const getblockhashDouble = (n) => `{"jsonrpc":"1.0","id":${n},"method":"getblockhash","params":[${n % doubleHeight}]}`;
  const walletInfo = (n) => `{"jsonrpc":"1.0","id":${n},"method":"getwalletinfo","params":[]}`;
  const sendRaw = (n) => `{"jsonrpc":"1.0","id":${n},"method":"sendrawtransaction","params":["${txHex}"]}`;
  const cases = [
    ['getblockhash, distinct heights', 'Core', '/', getblockhash, node.url, node.authorization(), coreProxy, corePid],
    [
      'getblockhash, distinct heights',
      'double',
      '/',
      getblockhashDouble,
      double.info.url,
      auth('bench', 'benchpass'),
      doubleProxy,
      double.child.pid,
    ],
    [
      'getwalletinfo on /wallet/bench (a wallet call)',
      'Core',
      '/wallet/bench',
      walletInfo,
      node.url,
      node.authorization(),
      coreProxy,
      corePid,
    ],
    ['sendrawtransaction of a mempool tx (a write)', 'Core', '/', sendRaw, node.url, node.authorization(), coreProxy, corePid],
  ];
  const only = process.env.BENCH_ONLY; // a substring of the case names, to run fewer
  const rows = [];
  for (const [name, backend, path, bodyFor, directUrl, directAuth, proxy, backendPid] of cases) {
    if (only !== undefined && !`${name} ${backend}`.includes(only)) continue;
    const other = backend === 'Core' ? compareProxy : undefined;
    // The reference servers of a Core row, each run after the proxy in every round.
    const references =
      backend === 'Core'
        ? [
            { label: FORWARDER, server: forwarder, runs: [] },
            { label: LAYERS, server: layers, runs: [] },
            { label: CEILING, server: ceiling, runs: [] },
          ]
        : [];
    await run(proxy.info.url, path, client, bodyFor, [], WARM_UP_SECONDS);
    if (other) await run(other.info.url, path, client, bodyFor, [], WARM_UP_SECONDS);
    for (const { server } of references) await run(server.info.url, path, client, bodyFor, [], WARM_UP_SECONDS);
    const direct = [];
    const proxied = [];
    const compared = [];
    for (let r = 0; r < ROUNDS; r++) {
      direct.push(await run(directUrl, path, directAuth, bodyFor, [backendPid]));
      // With a second build, the two proxies take turns going first.
      const viaProxy = () => run(proxy.info.url, path, client, bodyFor, [proxy.child.pid, backendPid]);
      const viaOther = () => run(other.info.url, path, client, bodyFor, [other.child.pid, backendPid]);
      if (other && r % 2 === 1) compared.push(await viaOther());
      proxied.push(await viaProxy());
      if (other && r % 2 === 0) compared.push(await viaOther());
      for (const { server, runs } of references)
        runs.push(await run(server.info.url, path, client, bodyFor, [server.child.pid, backendPid]));
    }
    rows.push({ name, backend, direct, proxied, compared, references });
  }
  // The HTTP exchange alone, same client settings: [node:http runs, the proxy's front end's, bare socket runs].
  const floor = [[], [], []];
  if (only === undefined) {
    const exchanges = [await start(['exchange', 'http']), await start(['exchange', 'front']), await start(['exchange', 'net'])];
    servers.push(...exchanges);
    for (const e of exchanges) await run(e.info.url, '/', client, getblockhash, [], WARM_UP_SECONDS);
    for (let r = 0; r < ROUNDS; r++)
      for (const [i, e] of exchanges.entries()) floor[i].push(await run(e.info.url, '/', client, getblockhash, [e.child.pid]));
  }
  const col = (runs, key) => runs.map((r) => r[key]);
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  const lines = [
    `# rpc-proxy: calls it cannot merge, real Bitcoin Core (${CONNECTIONS} connections, ${DURATION} s per run after a pause of ${PAUSE_MS / 1000} s, ${ROUNDS} interleaved rounds, ${new Date().toISOString()})`,
    '',
    `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average at the end ${load}. Node: Bitcoin Core ${bitcoindVersion(found.path) ?? '?'}, regtest, ${NODE_ARGS.join(' ')} -txindex=1; proxy defaults (NODE_MAX_CONCURRENCY=16).`,
    '',
    '| call | backend | to | req/s | of direct | p50 ms | added p50 ms | p99 ms | proxy CPU µs/req | backend CPU µs/req | client CPU µs/req | all CPU µs/req | of direct, CPU-bound |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.flatMap(({ name, backend, direct, proxied, compared, references }) => {
      const allDirect = direct.map((d) => d.cpu[0] + d.client);
      const proxyRow = (label, runs) => {
        const all = runs.map((p) => p.cpu[0] + p.cpu[1] + p.client);
        return `| | | ${label} | ${cell(col(runs, 'rps'))} | ${cell(runs.map((p, i) => (p.rps / direct[i].rps) * 100))} % | ${cell(col(runs, 'p50'))} | ${cell(runs.map((p, i) => p.p50 - direct[i].p50))} | ${cell(col(runs, 'p99'))} | ${cell(runs.map((p) => p.cpu[0]))} | ${cell(runs.map((p) => p.cpu[1]))} | ${cell(col(runs, 'client'))} | ${cell(all)} | ${cell(all.map((a, i) => (allDirect[i] / a) * 100))} % |`;
      };
      return [
        `| ${name} | ${backend} | direct | ${cell(col(direct, 'rps'))} | | ${cell(col(direct, 'p50'))} | | ${cell(col(direct, 'p99'))} | | ${cell(direct.map((d) => d.cpu[0]))} | ${cell(col(direct, 'client'))} | ${cell(allDirect)} | |`,
        proxyRow('proxy', proxied),
        ...(compared.length > 0 ? [proxyRow('proxy, BENCH_COMPARE_DIST', compared)] : []),
        ...references.map(({ label, runs }) => proxyRow(label, runs)),
      ];
    }),
    // The two builds' runs of a round are seconds apart: their ratios, round by round, are steadier than the rows' medians.
    ...rows
      .filter(({ compared }) => compared.length > 0)
      .map(
        ({ name, proxied, compared }) =>
          `\nA/B, ${name}: this build against BENCH_COMPARE_DIST, paired by round: proxy CPU ${cell(proxied.map((p, i) => (p.cpu[0] / compared[i].cpu[0]) * 100))} %, throughput ${cell(proxied.map((p, i) => (p.rps / compared[i].rps) * 100))} % (medians of the ${proxied.length} rounds' ratios, range).`,
      ),
    '',
    "The proxy's per-call work, Core rows (each round's proxy run against the same round's runs of the two references, median and",
    'range of the rounds): the CPU a call the proxy spends above its own front end and node client alone (the JSON-RPC handler:',
    'authentication, rules, coalescing, request id, metrics, request line), and its throughput against each reference.',
    '',
    '| call | per-call work, proxy CPU µs/req above the layers alone | proxy / the layers alone | proxy / the ceiling |',
    '|---|---:|---:|---:|',
    ...rows
      .filter(({ backend }) => backend === 'Core')
      .map(({ name, proxied, references }) => {
        const runsOf = (label) => references.find((r) => r.label === label).runs;
        const [layers, ceiling] = [runsOf(LAYERS), runsOf(CEILING)];
        return `| ${name} | ${cell(proxied.map((p, i) => p.cpu[0] - layers[i].cpu[0]))} | ${cell(proxied.map((p, i) => (p.rps / layers[i].rps) * 100))} % | ${cell(proxied.map((p, i) => (p.rps / ceiling[i].rps) * 100))} % |`;
      }),
    '',
    "Where a server's CPU a request goes, Core rows (medians, µs): user, its own code; system, the kernel's work for it (system calls, the",
    "loopback's TCP, waking its peers). The node's is its CPU a call direct; the others' are the server's, not the node's.",
    '',
    '| call | server | user µs/req | system µs/req |',
    '|---|---|---:|---:|',
    ...rows
      .filter(({ backend }) => backend === 'Core')
      .flatMap(({ name, direct, proxied, compared, references }) =>
        [
          ['Bitcoin Core, direct', direct],
          ['proxy', proxied],
          ...(compared.length > 0 ? [['proxy, BENCH_COMPARE_DIST', compared]] : []),
          ...references.map(({ label, runs }) => [label, runs]),
        ].map(
          ([label, runs], i) =>
            `| ${i === 0 ? name : ''} | ${label} | ${cell(runs.map((x) => x.split.user))} | ${cell(runs.map((x) => x.split.system))} |`,
        ),
      ),
    '',
    'Target (issue 20): through the proxy ≥ 85 % of direct throughput, ≤ 1 ms added p50, for calls it cannot merge.',
    'Ratios pair each proxy run with the direct run just before it; autocannon, the proxy and the node share the cores.',
    '"all CPU" adds the client\'s (autocannon, this process), the proxy\'s and the backend\'s CPU per request; "of direct, CPU-bound"',
    "is the direct run's all-CPU over the proxied run's: the throughput ratio to expect when the cores are the limit.",
    '"bare forwarder" (Core rows): a node:http server that sends each call to the node over undici and writes the answer back, nothing',
    'else (no authentication, checks, batching, metrics or log line): what any proxy built on node:http costs on this machine; its',
    '"proxy CPU" column is the forwarder\'s.',
    '"bare batching proxy" (Core rows): bare sockets toward the client and the node (no node:http, no undici), each path\'s calls held',
    "while that path's batches are out and sent as one batch, with the proxy's default batch settings; no authentication, checks, limits, timeouts, metrics",
    'or log line: the ceiling of any proxy on this machine, what it reaches when all it does per call beyond that costs nothing.',
    '"the proxy\'s front end and node client alone" (Core rows): the proxy\'s own front end and node client with its default settings, each',
    "call handed straight from one to the other and Core's answer written back with the proxy's headers; no authentication, checks,",
    "coalescing, metrics or log line. From this row to the proxy's is what the JSON-RPC handler's per-call work costs; from the",
    "ceiling's to this row, what the two layers cost beyond bare sockets.",
    ...(floor[0].length > 0
      ? [
          '',
          'The HTTP exchange alone (the same client and calls; the server reads each body and writes a fixed answer):',
          '',
          '| server | req/s | server CPU µs/req | user | system | client CPU µs/req |',
          '|---|---:|---:|---:|---:|---:|',
          ...[
            ['node:http (what the forwarder is built on, and the proxy for what its front end leaves)', floor[0]],
            ["the proxy's front end (src/fast-front.ts: each whole call read and answered without node:http's streams)", floor[1]],
            ['bare sockets (finds the head and Content-Length, nothing else)', floor[2]],
          ].map(
            ([label, runs]) =>
              `| ${label} | ${cell(col(runs, 'rps'))} | ${cell(runs.map((x) => x.cpu[0]))} | ${cell(runs.map((x) => x.split.user))} | ${cell(runs.map((x) => x.split.system))} | ${cell(col(runs, 'client'))} |`,
          ),
        ]
      : []),
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
