// npm run bench: requests/second and p50/p99 latency at 50 connections, through the proxy
// and straight to the chain double, in the same run (issue 4 "Benchmark").
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import autocannon from 'autocannon';

const here = dirname(fileURLToPath(import.meta.url));
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 50;

function start(args, stream) {
  const child = spawn(process.execPath, [join(here, 'bench-servers.cjs'), ...args], { stdio: ['ignore', stream === 'stdout' ? 'pipe' : 'ignore', stream === 'stderr' ? 'pipe' : 'inherit'], env: { ...process.env } });
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child[stream] });
    rl.once('line', (line) => resolve({ child, info: JSON.parse(line) }));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
}

const auth = (u, p) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

async function run(url, authorization, body) {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors for ${body}`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

const double = await start(['double'], 'stdout');
const proxy = await start(['proxy', double.info.url], 'stderr');
try {
  const hash = double.info.hash;
  const cases = [
    ['getblockchaininfo', { jsonrpc: '1.0', id: 'b', method: 'getblockchaininfo', params: [] }],
    ['getblock (verbosity 1)', { jsonrpc: '1.0', id: 'b', method: 'getblock', params: [hash, 1] }],
    ['getblock (verbosity 0, cached by the proxy)', { jsonrpc: '1.0', id: 'b', method: 'getblock', params: [hash, 0] }],
  ];
  const rows = [];
  for (const [name, call] of cases) {
    const body = JSON.stringify(call);
    await run(proxy.info.url, auth('client', 'clientpass'), body); // warm-up (JIT, keep-alive pool, cache)
    const direct = await run(double.info.url, auth('bench', 'benchpass'), body);
    const proxied = await run(proxy.info.url, auth('client', 'clientpass'), body);
    rows.push({ name, direct, proxied });
  }
  const f = (n) => (Math.round(n * 100) / 100).toString();
  const lines = [
    `# rpc-proxy benchmark (${CONNECTIONS} connections, ${DURATION} s per run, loopback, ${new Date().toISOString()})`,
    '',
    '| call | direct req/s | proxy req/s | proxy/direct | direct p50 ms | proxy p50 ms | added p50 ms | direct p99 ms | proxy p99 ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(({ name, direct, proxied }) =>
      `| ${name} | ${f(direct.rps)} | ${f(proxied.rps)} | ${f((proxied.rps / direct.rps) * 100)} % | ${f(direct.p50)} | ${f(proxied.p50)} | ${f(proxied.p50 - direct.p50)} | ${f(direct.p99)} | ${f(proxied.p99)} |`,
    ),
    '',
    'Targets (issue 4): proxy ≥ 85 % of direct throughput, ≤ 1 ms added p50, cached getblock faster than direct.',
    'The double, the proxy and autocannon each run in their own process on the same machine.',
  ];
  const table = lines.join('\n');
  process.stdout.write(`${table}\n`);
  writeFileSync(join(here, '..', 'bench-report.md'), `${table}\n`);
} finally {
  double.child.kill();
  proxy.child.kill();
}
