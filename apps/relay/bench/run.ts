/**
 * `npm run bench`: delivery latency and throughput of the relay next to a bare `ws` broadcast
 * server measured in the same run (issue 6, "Benchmark"). Servers run in child processes, the
 * clients and the publisher in this one, so send and receive times come from one clock.
 *
 * 1. One server, BENCH_CLIENTS (1000) clients, BENCH_RATE (100) events/s for BENCH_SECONDS (5 s):
 *    latency p50/p99 over every delivery, and deliveries per second (better of two alternating rounds).
 * 2. A chain of three servers (relays peered A <- B <- C; reference: three ws servers each
 *    subscribed to the previous one), events published to the first, latency on the last.
 * 3. Replay: 1,000 (BENCH_REPLAY_EVENTS) events published and acknowledged, the relay killed
 *    and restarted on its DATA_DIR, a client subscribing with `since` receives them from the log
 *    (events/s), next to as many events fanned out live to the same client in the same run.
 *
 * Writes the table to bench-report.md in the package folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { WebSocket } from 'ws';
import { openRawClient, type RawClient } from './raw-client';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CHAIN_CLIENTS = Number(process.env.BENCH_CHAIN_CLIENTS ?? 100);
const TOKEN = 'bench-publish-token-0123456789abcdef';
const APP_DIR = join(__dirname, '..');

const children: ChildProcess[] = [];
const dirs: string[] = [];

interface Server {
  wsUrl: string;
  httpUrl?: string;
  proc: ChildProcess;
}

function waitForLine(proc: ChildProcess, match: (line: string) => RegExpMatchArray | null, what: string): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: not ready within 15 s`)), 15_000);
    const rl = createInterface({ input: proc.stdout! });
    rl.on('line', (line) => {
      const m = match(line);
      if (m) {
        clearTimeout(timer);
        rl.removeAllListeners('line');
        proc.stdout!.resume();
        resolve(m);
      }
    });
    proc.once('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
  });
}

async function startRelay(name: string, peers: string[] = [], dataDir?: string): Promise<Server> {
  if (dataDir === undefined) {
    dataDir = mkdtempSync(join(tmpdir(), `relay-bench-${name}-`));
    dirs.push(dataDir);
  }
  const proc = spawn(process.execPath, [join(APP_DIR, 'dist', 'main.js')], {
    cwd: APP_DIR,
    env: {
      ...process.env,
      RELAY_ID: name,
      DATA_DIR: dataDir,
      WS_PORT: '0',
      HTTP_PORT: '0',
      LOG_LEVEL: 'info',
      RELAY_PUBLISH_TOKEN: TOKEN,
      RELAY_PEERS: peers.join(','),
      // Every client of the benchmark comes from 127.0.0.1, and the last tenth of
      // MAX_WS_CONNECTIONS is kept for addresses with none open: room for all of them past it.
      MAX_WS_CONNECTIONS: String(Math.ceil(((CLIENTS + 100) * 10) / 9) + 1),
      MAX_WS_CONNECTIONS_PER_IP: String(Math.ceil(((CLIENTS + 100) * 10) / 9) + 1),
      RELAY_RECONNECT_MIN_MS: '100',
      // The receivers are anonymous, and the events published are TransactionReceived.
      RELAY_PAYMENTS_PUBLIC: 'true',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(proc);
  // One `relay listening` line per server, logged once both listen: the ws line comes first.
  const ports: Record<string, string> = {};
  await waitForLine(
    proc,
    (line) => {
      const m = line.includes('"relay listening"') ? /"server":"(ws|http)".*"port":(\d+)/.exec(line) : null;
      if (m !== null) ports[m[1]!] = m[2]!;
      return ports.ws !== undefined && ports.http !== undefined ? m : null;
    },
    `relay ${name}`,
  );
  return { wsUrl: `ws://127.0.0.1:${ports.ws}`, httpUrl: `http://127.0.0.1:${ports.http}`, proc };
}

async function startReference(upstream?: string): Promise<Server> {
  const proc = spawn(process.execPath, ['-r', '@repo/ts-register', join(__dirname, 'reference-server.ts')], {
    cwd: APP_DIR,
    env: { ...process.env, ...(upstream ? { UPSTREAM: upstream } : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(proc);
  const m = await waitForLine(proc, (line) => /^listening (\d+)$/.exec(line), 'reference server');
  return { wsUrl: `ws://127.0.0.1:${m[1]}`, proc };
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (server.proc.exitCode !== null) return resolve();
    server.proc.once('exit', () => resolve());
    server.proc.kill('SIGTERM');
  });
}

async function openReceivers(url: string, n: number): Promise<RawClient[]> {
  const out: RawClient[] = [];
  for (let i = 0; i < n; i += 100) out.push(...(await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => openRawClient(url)))));
  return out;
}

async function openClients(url: string, n: number, headers: Record<string, string> = {}): Promise<WebSocket[]> {
  const out: WebSocket[] = [];
  for (let i = 0; i < n; i += 100) {
    const batch = Array.from({ length: Math.min(100, n - i) }, () => new WebSocket(url, { headers, perMessageDeflate: false }));
    await Promise.all(
      batch.map(
        (ws) =>
          new Promise<void>((resolve, reject) => {
            ws.once('open', () => resolve());
            ws.once('error', reject);
          }),
      ),
    );
    out.push(...batch);
  }
  return out;
}

interface Result {
  p50: number;
  p99: number;
  perSecond: number;
  delivered: number;
  expected: number;
}

/** Publishes `RATE` events/s for `seconds` to `publishUrl` and measures delivery on `receivers`. */
let nextSeq = 0;

async function measure(publishUrl: string, receivers: RawClient[], seconds: number): Promise<Result> {
  const [publisher] = await openClients(publishUrl, 1, { Authorization: `Bearer ${TOKEN}` });
  const total = Math.round(RATE * seconds);
  // Sequence numbers run on across runs, so a late copy of an earlier run is recognised and ignored.
  const base = nextSeq;
  nextSeq += total;
  const sentAt = new Float64Array(total);
  const latencies = new Float64Array(total * receivers.length);
  let delivered = 0;
  let lastDelivery = 0;
  const runId = Math.random().toString(36).slice(2);
  let allDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (allDone = resolve));
  const onSeq = (globalSeq: number, at: number) => {
    const seq = globalSeq - base;
    if (seq < 0 || seq >= total) return;
    latencies[delivered++] = at - sentAt[seq]!;
    lastDelivery = at;
    if (delivered === latencies.length) allDone();
  };
  for (const r of receivers) r.onSeq = onSeq;
  const start = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * RATE) + 1);
      for (; sent < due; sent++) {
        sentAt[sent] = performance.now();
        publisher!.send(
          JSON.stringify({
            type: 'TransactionReceived',
            id: `${runId}-${sent}`,
            timestamp: Date.now(),
            data: {
              txid: 'ab'.repeat(32),
              amount: 0.001,
              address: 'tsp1qbench',
              block_height: 200000,
              confirmations: 1,
              run: runId,
              seq: base + sent,
            },
          }),
        );
      }
      if (sent >= total) resolve();
      else setTimeout(tick, 2);
    };
    tick();
  });
  // Wait for the stragglers, but never forever: missing deliveries show in the table.
  await Promise.race([done, new Promise((r) => setTimeout(r, 5_000))]);
  for (const r of receivers) r.onSeq = () => undefined;
  publisher!.terminate();
  const sorted = latencies.slice(0, delivered).sort();
  const pct = (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!);
  return {
    p50: pct(0.5),
    p99: pct(0.99),
    perSecond: delivered / ((lastDelivery - start) / 1000),
    delivered,
    expected: latencies.length,
  };
}

async function waitForPeers(httpUrl: string, n: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const body = (await (await fetch(`${httpUrl}/relays`)).json()) as { relays: { status: string }[] };
    if (body.relays.filter((r) => r.status === 'connected').length >= n) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${httpUrl}: mesh not up`);
}

async function singleServer(server: Server): Promise<Result> {
  const clients = await openReceivers(server.wsUrl, CLIENTS);
  // Warm-up (JIT, socket buffers), not counted.
  await measure(server.wsUrl, clients, 0.5);
  const result = await measure(server.wsUrl, clients, SECONDS);
  for (const r of clients) r.close();
  return result;
}

async function chain(first: Server, last: Server): Promise<Result> {
  const clients = await openReceivers(last.wsUrl, CHAIN_CLIENTS);
  await measure(first.wsUrl, clients, 0.5);
  const result = await measure(first.wsUrl, clients, Math.min(SECONDS, 3));
  for (const r of clients) r.close();
  return result;
}

interface ReplayResult {
  replayPerSecond: number;
  livePerSecond: number;
  replayed: number;
  inOrder: boolean;
  live: number;
}

const blockScanned = (id: string, seq: number) =>
  JSON.stringify({
    type: 'BlockScanned',
    id,
    timestamp: Date.now(),
    data: { block_height: 200000 + seq, block_hash: 'cd'.repeat(32), transactions_count: 1, silent_payments_found: 0, seq },
  });

/** Sends `texts` on `ws` and resolves once the relay acknowledged every id in `ids`. */
function publishAcked(ws: WebSocket, texts: string[], ids: string[]): Promise<void> {
  const want = new Set(ids);
  return new Promise((resolve) => {
    const onMessage = (raw: Buffer) => {
      const m = JSON.parse(raw.toString()) as { type: string; id: string };
      if (m.type === 'ack' && want.delete(m.id) && want.size === 0) {
        ws.off('message', onMessage);
        resolve();
      }
    };
    ws.on('message', onMessage);
    for (const t of texts) ws.send(t);
  });
}

/** Collects the BlockScanned `seq`s a client receives; resolves when `n` arrived (or after 30 s). */
function collect(ws: WebSocket, n: number, startSeq: number): { done: Promise<number>; seqs: number[] } {
  const seqs: number[] = [];
  let last = 0;
  const done = new Promise<number>((resolve) => {
    const timer = setTimeout(() => resolve(last), 30_000);
    const onMessage = (raw: Buffer) => {
      const m = JSON.parse(raw.toString()) as { type: string; data: { seq?: number } };
      if (m.type !== 'BlockScanned' || typeof m.data.seq !== 'number' || m.data.seq < startSeq) return;
      seqs.push(m.data.seq);
      last = performance.now();
      if (seqs.length === n) {
        clearTimeout(timer);
        ws.off('message', onMessage);
        resolve(last);
      }
    };
    ws.on('message', onMessage);
  });
  return { done, seqs };
}

/**
 * 3. Replay next to live fan-out: 1,000 events are published (each acknowledged), the relay is
 * killed (SIGKILL) and restarted on its DATA_DIR; a client subscribes with `since` = the last
 * event it saw before them and receives the 1,000 from the log (replay rate); then 1,000 more are
 * published as fast as the publisher can send and reach the same client live (live rate).
 */
async function replayVersusLive(n: number): Promise<ReplayResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'relay-bench-replay-'));
  dirs.push(dataDir);
  let relay = await startRelay('bench-replay', [], dataDir);
  let [pub] = await openClients(relay.wsUrl, 1, { Authorization: `Bearer ${TOKEN}` });
  await publishAcked(pub!, [blockScanned('seen-last', -1)], ['seen-last']);
  const missedIds = Array.from({ length: n }, (_, i) => `missed-${i}`);
  await publishAcked(
    pub!,
    missedIds.map((id, i) => blockScanned(id, i)),
    missedIds,
  );
  pub!.terminate();
  // A crash, not a shutdown: every acknowledged event must be in the log all the same.
  await new Promise<void>((resolve) => {
    relay.proc.once('exit', () => resolve());
    relay.proc.kill('SIGKILL');
  });
  relay = await startRelay('bench-replay', [], dataDir);
  const [client] = await openClients(relay.wsUrl, 1);
  const replay = collect(client!, n, 0);
  const replayStart = performance.now();
  client!.send(JSON.stringify({ type: 'subscribe', id: 'replay', data: { types: ['BlockScanned'], since: 'seen-last' } }));
  const replayEnd = await replay.done;
  const replayed = replay.seqs.length;
  const inOrder = replay.seqs.every((seq, i) => seq === i);

  [pub] = await openClients(relay.wsUrl, 1, { Authorization: `Bearer ${TOKEN}` });
  const live = collect(client!, n, n);
  const liveIds = Array.from({ length: n }, (_, i) => `live-${i}`);
  const texts = liveIds.map((id, i) => blockScanned(id, n + i));
  const liveStart = performance.now();
  for (const t of texts) pub!.send(t);
  const liveEnd = await live.done;
  pub!.terminate();
  client!.terminate();
  await stop(relay);
  return {
    replayPerSecond: replayed / ((replayEnd - replayStart) / 1000),
    livePerSecond: live.seqs.length / ((liveEnd - liveStart) / 1000),
    replayed,
    inOrder,
    live: live.seqs.length,
  };
}

const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

type Row = (scenario: string, metric: string, relay: number, ref: number, target: string, digits?: number) => void;

async function scenarioSingle(row: Row): Promise<void> {
  // 1. One server, many clients.
  // Two rounds in alternating order (reference, relay, relay, reference), keeping each one's
  // better round: the cores are shared, and a burst of load elsewhere should not decide the ratio.
  const better = (x: Result | undefined, y: Result) => (x === undefined || y.p99 < x.p99 ? y : x);
  let refSingle: Result | undefined;
  let relaySingle: Result | undefined;
  for (const kind of ['reference', 'relay', 'relay', 'reference'] as const) {
    const server = kind === 'reference' ? await startReference() : await startRelay('bench-single');
    const result = await singleServer(server);
    await stop(server);
    if (kind === 'reference') refSingle = better(refSingle, result);
    else relaySingle = better(relaySingle, result);
  }
  if (refSingle === undefined || relaySingle === undefined) throw new Error('unreachable');
  const s1 = `1 server, ${CLIENTS} clients, ${RATE} events/s, ${SECONDS} s (better of 2 rounds)`;
  row(s1, 'latency p50 (ms)', relaySingle.p50, refSingle.p50, '');
  row(s1, 'latency p99 (ms)', relaySingle.p99, refSingle.p99, `< 50 ms: ${relaySingle.p99 < 50 ? 'met' : 'NOT met'}`);
  row(s1, 'delivered msgs/s', relaySingle.perSecond, refSingle.perSecond, '', 0);
  row(s1, 'delivered / expected', relaySingle.delivered / relaySingle.expected, refSingle.delivered / refSingle.expected, '', 4);
}

async function scenarioChain(row: Row): Promise<void> {
  // 2. Three servers in a chain, clients on the far end.
  const r1 = await startReference();
  const r2 = await startReference(r1.wsUrl);
  const r3 = await startReference(r2.wsUrl);
  const refChain = await chain(r1, r3);
  await Promise.all([r1, r2, r3].map(stop));
  const a = await startRelay('bench-a');
  const b = await startRelay('bench-b', [a.wsUrl]);
  const c = await startRelay('bench-c', [b.wsUrl]);
  await waitForPeers(c.httpUrl!, 1);
  await waitForPeers(b.httpUrl!, 2);
  const relayChain = await chain(a, c);
  await Promise.all([a, b, c].map(stop));
  const s2 = `3-server chain, ${CHAIN_CLIENTS} clients on the far end, ${RATE} events/s`;
  row(s2, 'latency p50 (ms)', relayChain.p50, refChain.p50, '');
  row(s2, 'latency p99 (ms)', relayChain.p99, refChain.p99, `< 100 ms: ${relayChain.p99 < 100 ? 'met' : 'NOT met'}`);
  row(s2, 'delivered msgs/s', relayChain.perSecond, refChain.perSecond, '', 0);
  row(s2, 'delivered / expected', relayChain.delivered / relayChain.expected, refChain.delivered / refChain.expected, '', 4);
}

async function scenarioReplay(rows: string[]): Promise<void> {
  // 3. Replay of missed events after a crash, next to live fan-out of as many.
  const REPLAY_EVENTS = Number(process.env.BENCH_REPLAY_EVENTS ?? 1000);
  const rv = await replayVersusLive(REPLAY_EVENTS);
  const s3 = `${REPLAY_EVENTS} missed events replayed after a SIGKILL restart (since = last seen id) vs ${REPLAY_EVENTS} live, 1 client`;
  rows.push(
    `| ${s3} | events/s to the client | replay ${fmt(rv.replayPerSecond, 0)} | live ${fmt(rv.livePerSecond, 0)} | ${fmt(rv.replayPerSecond / rv.livePerSecond)} | all ${REPLAY_EVENTS} replayed in order: ${rv.replayed === REPLAY_EVENTS && rv.inOrder ? 'yes' : `NO (${rv.replayed}, in order: ${rv.inOrder})`}; live ${rv.live}/${REPLAY_EVENTS} |`,
  );
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0]!;
  const rows: string[] = [];
  const row = (scenario: string, metric: string, relay: number, ref: number, target: string, digits = 2) =>
    rows.push(`| ${scenario} | ${metric} | ${fmt(relay, digits)} | ${fmt(ref, digits)} | ${fmt(relay / ref)} | ${target} |`);

  // BENCH_SCENARIOS (default 1,2,3) picks the scenarios to run.
  const scenarios = new Set((process.env.BENCH_SCENARIOS ?? '1,2,3').split(',').map((x) => x.trim()));
  if (scenarios.has('1')) await scenarioSingle(row);
  if (scenarios.has('2')) await scenarioChain(row);
  if (scenarios.has('3')) await scenarioReplay(rows);

  const table = [
    `# Relay benchmark (${new Date().toISOString()}, Node ${process.version})`,
    '',
    `Machine: ${availableParallelism()} cores, load average ${loadBefore.toFixed(2)} before and ${loadavg()[0]!.toFixed(2)} after the run (other processes share the cores: compare the ratios, not the absolute figures).`,
    '',
    'Reference: a bare `ws` broadcast server (no validation, de-duplication or accounting), in a chain of three for scenario 2. Ratio = relay / reference (latency: lower is better; msgs/s: higher is better). Scenario 3 compares the relay with itself: replay from the event log / live fan-out (the live path commits each event to the log before it delivers it; acknowledgements to the publisher also wait for the fdatasync of the log).',
    '',
    '| scenario | metric | relay | reference (bare ws) | ratio | target |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
  process.stdout.write(`${table}\n`);
  writeFileSync(join(APP_DIR, 'bench-report.md'), table);
}

main()
  .catch((err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
