// pnpm bench:watch (apps/config-server): 1,000 clients wait on one file (`?wait=` with
// If-None-Match), the file changes once: the time until every client has its answer, next to
// the time of 1,000 plain fetches of the same file at once over the same warm connections (the
// same rendering, sealing and sending, without the wait); and the server's memory per waiting
// client, next to the idle server holding the same 1,000 open connections. The server runs in
// its own process (bench/watch-server.mjs). Rounds alternate; medians are printed. The table is
// also written to bench-report-watch.md, and with --append (as `pnpm bench` runs it, after
// bench/run.mjs) added to bench-report.md, which the root report gathers.
import { fork } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const server = fork(join(here, 'watch-server.mjs'), [String(CLIENTS)], { execArgv: ['--expose-gc'] });
// Should the bench fail, the server goes with it (else it holds the output `pnpm bench` waits on).
process.on('exit', () => server.kill());
const { port, file, ca } = await new Promise((resolve) => server.once('message', resolve));
const ask = (message) =>
  new Promise((resolve) => {
    server.once('message', resolve);
    server.send(message);
  });
const agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: CLIENTS, ca });

function get(headers = {}, query = '') {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: `/bench/app.conf${query}`, headers, agent, servername: 'localhost' }, (res) => {
      let length = 0;
      res.on('data', (c) => (length += c.length));
      res.on('end', () => resolve({ status: res.statusCode, etag: res.headers.etag, length, at: performance.now() }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function plainFetches() {
  const start = performance.now();
  const replies = await Promise.all(Array.from({ length: CLIENTS }, () => get()));
  if (replies.some((r) => r.status !== 200)) throw new Error('a plain fetch failed');
  return performance.now() - start;
}

let edit = 0;
async function waitRound() {
  const { etag } = await get();
  const idle = await ask('mem');
  const pending = Array.from({ length: CLIENTS }, () => get({ 'If-None-Match': etag }, '?wait=25'));
  for (;;) {
    const stats = await ask('mem');
    if (stats.waiting === CLIENTS) {
      const changedAt = performance.now();
      writeFileSync(file, `edit=${++edit}\n`, { flag: 'a' });
      const replies = await Promise.all(pending);
      if (replies.some((r) => r.status !== 200 || r.etag === etag))
        throw new Error('a waiting client was not answered with the new version');
      const ats = replies.map((r) => r.at - changedAt);
      return { all: Math.max(...ats), first: Math.min(...ats), idle, waiting: stats, files: stats.files };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const coldStart = performance.now();
await plainFetches(); // opens the 1,000 connections (TLS handshakes), warms the JIT
const cold = performance.now() - coldStart;
const plain = [];
const waits = [];
for (let i = 0; i < ROUNDS; i++) {
  plain.push(await plainFetches());
  waits.push(await waitRound());
}
const exited = new Promise((resolve) => server.once('exit', resolve));
server.send('stop');
await exited;
agent.destroy();

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const allMs = median(waits.map((w) => w.all));
const firstMs = median(waits.map((w) => w.first));
const plainMs = median(plain);
const heapPer = median(waits.map((w) => (w.waiting.heapUsed - w.idle.heapUsed) / CLIENTS));
const rssPer = median(waits.map((w) => (w.waiting.rss - w.idle.rss) / CLIENTS));
const idleHeap = median(waits.map((w) => w.idle.heapUsed));
const idleRss = median(waits.map((w) => w.idle.rss));
const table = `# config-server change watch (${CLIENTS} clients on one file, ${ROUNDS} rounds, medians)

| measure | value | reference (same run) | ratio |
| --- | --- | --- | --- |
| all ${CLIENTS} waiting clients answered after one change | ${allMs.toFixed(0)} ms (first answer ${firstMs.toFixed(0)} ms) | ${CLIENTS} plain fetches at once, warm connections: ${plainMs.toFixed(0)} ms | ${(allMs / plainMs).toFixed(2)} |
| server heap per waiting client | ${kb(heapPer)} | idle server heap, ${CLIENTS} open connections: ${mb(idleHeap)} | ${((heapPer * CLIENTS) / idleHeap).toFixed(2)} (all waiters / idle) |
| server RSS per waiting client | ${kb(rssPer)} | idle server RSS, ${CLIENTS} open connections: ${mb(idleRss)} | ${((rssPer * CLIENTS) / idleRss).toFixed(2)} (all waiters / idle) |
| file watchers while ${CLIENTS} clients wait | ${waits[0].files} | | |

Rounds, all answered (ms): ${waits.map((w) => w.all.toFixed(0)).join(', ')}; plain fetches (ms): ${plain.map((p) => p.toFixed(0)).join(', ')}; first ${CLIENTS} fetches with TLS handshakes: ${cold.toFixed(0)} ms.
`;
process.stdout.write(table);
writeFileSync(join(here, '..', 'bench-report-watch.md'), table);
if (process.argv.includes('--append')) appendFileSync(join(here, '..', 'bench-report.md'), `\n${table.replace(/^# /, '### ')}`);
