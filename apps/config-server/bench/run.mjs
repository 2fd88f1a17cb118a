// pnpm bench (apps/config-server): HTTP throughput of the file endpoint next to an express hello
// endpoint measured in the same run, and envelope encryption speed next to raw node:crypto on
// the same buffers. Each figure is printed with its reference and the ratio, because these
// machines are shared and noisy. The table is also written to bench-report.md.
import { spawn } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { nobleBackend, nodeBackend, seal, sealToBase64 } from '@repo/crypto';

const here = dirname(fileURLToPath(import.meta.url));
const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

function startTarget(mode) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'server.mjs'), mode], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.once('data', (d) => resolve({ child, port: Number(String(d).trim()) }));
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
}

async function load(url) {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, pipelining: 1 });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

async function measureHttp(mode, path) {
  const { child, port } = await startTarget(mode);
  try {
    await autocannon({ url: `https://127.0.0.1:${port}${path}`, connections: 10, duration: 1 }); // warm-up
    return await load(`https://127.0.0.1:${port}${path}`);
  } finally {
    child.kill('SIGTERM');
  }
}

function mbPerSecond(fn, bytes) {
  const minMs = 400;
  let iterations = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < minMs) {
    fn();
    iterations++;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return (bytes * iterations) / (elapsed / 1000) / 1e6;
}

function rawNodeSeal(key, nonce, data) {
  const cipher = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
  const out = Buffer.concat([nonce, cipher.update(data), cipher.final(), cipher.getAuthTag()]);
  return out;
}

const rows = [];
const pct = (a, b) => `${((a / b) * 100).toFixed(0)} %`;

const file = await measureHttp('file', '/bench/app.conf');
const hello = await measureHttp('hello', '/hello');
rows.push([
  'GET /<env>/<file>, 4 KB with substitution (req/s)',
  file.rps.toFixed(0),
  `express hello over the same TLS: ${hello.rps.toFixed(0)}`,
  pct(file.rps, hello.rps),
  '≥ 70 %',
]);
rows.push(['  latency p50 / p99 (ms)', `${file.p50} / ${file.p99}`, `hello: ${hello.p50} / ${hello.p99}`, '', '']);

const key = new Uint8Array(randomBytes(32));
const nonce = new Uint8Array(randomBytes(12));
for (const [label, size] of [
  ['1 KB', 1024],
  ['64 KB', 65536],
  ['1 MB', 1 << 20],
  ['10 MB', 10 << 20],
]) {
  const data = new Uint8Array(randomBytes(size));
  const raw = mbPerSecond(() => rawNodeSeal(key, nonce, data), size);
  const ours = mbPerSecond(() => seal(key, data, { backend: nodeBackend, nonce }), size);
  const noble = size <= 1 << 20 ? mbPerSecond(() => seal(key, data, { backend: nobleBackend, nonce }), size) : NaN;
  rows.push([
    `seal ${label} (MB/s), node backend`,
    ours.toFixed(0),
    `raw node:crypto: ${raw.toFixed(0)}`,
    pct(ours, raw),
    size >= 65536 ? '≥ 80 %' : '',
  ]);
  if (!Number.isNaN(noble))
    rows.push([
      `seal ${label} (MB/s), noble backend`,
      noble.toFixed(0),
      `raw node:crypto: ${raw.toFixed(0)}`,
      pct(noble, raw),
      '(portable path)',
    ]);
}
const body4k = new Uint8Array(randomBytes(4096));
const b64 = mbPerSecond(() => sealToBase64(key, body4k, { backend: nodeBackend }), 4096);
rows.push(['seal + base64 4 KB (MB/s), as served', b64.toFixed(0), '', '', '']);

const table = [
  `config-server benchmark (${new Date().toISOString()}, ${CONNECTIONS} connections, ${DURATION} s per HTTP run, node ${process.version})`,
  '',
  '| measure | figure | reference (same run) | ratio | target |',
  '| --- | --- | --- | --- | --- |',
  ...rows.map((r) => `| ${r.join(' | ')} |`),
  '',
].join('\n');
process.stdout.write(table);
writeFileSync(join(here, '..', 'bench-report.md'), table);
