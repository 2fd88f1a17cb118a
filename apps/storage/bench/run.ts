import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startRedis } from '../test/support/redis-server';

// `npm run bench`: store, retrieve, touch and delete requests/second at 50 connections for each backend,
// each next to a bare express "hello" endpoint measured in the same run, with the ratio.
// Servers run in child processes (the built dist/main.js, as in production); the load
// generator is this process. Loopback only, bounded in time.

const APP_DIR = join(__dirname, '..');
const CONNECTIONS = 50;
const DURATION = Number(process.env.BENCH_DURATION_SECONDS ?? 5);
const WARMUP = 1;
const VALUE = randomBytes(64).toString('hex');

interface Child {
  child: ChildProcess;
  port: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts `node args…` with PORT set to a free port and resolves once `readyPath` answers 200. */
async function startChild(args: string[], env: Record<string, string>, readyPath: string): Promise<Child> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: APP_DIR,
    env: { PATH: process.env.PATH ?? '', PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}${readyPath}`)).ok) return { child, port };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`${args.join(' ')} did not start (exit code ${child.exitCode})`);
}

async function stopChild({ child }: Child): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

interface Measure {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  bad: number;
}

async function run(label: string, options: autocannon.Options): Promise<Measure> {
  const span = options.amount === undefined ? `${options.duration} s` : `${options.amount} requests`;
  process.stderr.write(`${label}: ${span} at ${CONNECTIONS} connections\n`);
  const result = await autocannon({ connections: CONNECTIONS, ...options });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    bad: result.non2xx + result.errors + result.timeouts,
  };
}

/** Unique keys: a random 48-hex prefix per phase and a counter. */
function keyMaker(): { next: () => string; at: (i: number) => string; count: () => number } {
  const prefix = randomBytes(24).toString('hex');
  let n = 0;
  const at = (i: number) => prefix + i.toString(16).padStart(16, '0');
  return { next: () => at(n++), at, count: () => n };
}

/** A stored key and the write token its store answered. */
interface Owned {
  key: string;
  token: string;
}

function storeRequests(keys: ReturnType<typeof keyMaker>, owned?: Owned[]): autocannon.Request[] {
  return [
    {
      method: 'POST',
      path: '/store',
      headers: { 'content-type': 'application/json' },
      // String building, not JSON.stringify: the load generator shares the CPU with the server.
      setupRequest: (req) => ({ ...req, body: `{"key":"${keys.next()}","value":"${VALUE}","ttl":3600}` }),
      // Keeps each key's write token for the touch and delete phases.
      ...(owned
        ? {
            onResponse: (status: number, body: string) => {
              if (status !== 200) return;
              const answer = JSON.parse(body) as { key: string; write_token: string };
              owned.push({ key: answer.key, token: answer.write_token });
            },
          }
        : {}),
    },
  ];
}

function authorized(req: autocannon.Request, entry: Owned): autocannon.Request {
  return { ...req, headers: { ...req.headers, authorization: `Bearer ${entry.token}` } };
}

interface StorageMeasures {
  store: Measure;
  retrieve: Measure;
  touch: Measure;
  delete: Measure;
}

async function measureStorage(name: string, url: string): Promise<StorageMeasures> {
  await run(`${name} store warm-up`, { url, duration: WARMUP, requests: storeRequests(keyMaker()) });
  const keys = keyMaker();
  const owned: Owned[] = [];
  const store = await run(`${name} store`, { url, duration: DURATION, requests: storeRequests(keys, owned) });
  // Retrieve keys the measured phase stored (all answered 200 when `bad` is 0).
  const stored = Math.min(keys.count() - CONNECTIONS, 20_000);
  let i = 0;
  const retrieve = await run(`${name} retrieve`, {
    url,
    duration: DURATION,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/retrieve/${keys.at(i++ % stored)}` }) }],
  });
  // Touch: a new ttl for stored keys in turn, with their tokens (durable, like a store).
  let t = 0;
  const touch = await run(`${name} touch`, {
    url,
    duration: DURATION,
    requests: [
      {
        method: 'POST',
        body: '{"ttl":7200}',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => {
          const entry = owned[t++ % owned.length]!;
          return authorized({ ...req, path: `/touch/${entry.key}` }, entry);
        },
      },
    ],
  });
  // Delete: each stored key once (a second delete would be 404), so a fixed number of requests.
  let d = 0;
  const remove = await run(`${name} delete`, {
    url,
    amount: owned.length - CONNECTIONS,
    requests: [
      {
        method: 'DELETE',
        setupRequest: (req) => {
          const entry = owned[d++ % owned.length]!;
          return authorized({ ...req, path: `/${entry.key}` }, entry);
        },
      },
    ],
  });
  return { store, retrieve, touch, delete: remove };
}

function row(name: string, m: Measure, reference: Measure): string {
  const ratio = ((m.rps / reference.rps) * 100).toFixed(0);
  return `| ${name} | ${Math.round(m.rps)} | ${Math.round(reference.rps)} | ${ratio} % | ${m.p50} | ${m.p99} | ${m.total} | ${m.bad} |`;
}

async function main(): Promise<void> {
  if (!existsSync(join(APP_DIR, 'dist', 'main.js'))) throw new Error('dist/main.js is missing: run `npm run build` first');
  const dir = mkdtempSync(join(tmpdir(), 'storage-bench-'));
  const serviceEnv = { HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', RATE_LIMIT_PER_SECOND: '0' };
  const rows: string[] = [];
  const notes: string[] = [];
  try {
    const hello = await startChild(['-r', '@repo/ts-register', 'bench/hello-server.ts'], {}, '/hello');
    const helloUrl = `http://127.0.0.1:${hello.port}/hello`;
    await run('hello warm-up', { url: helloUrl, duration: WARMUP });
    const reference = await run('hello', { url: helloUrl, duration: DURATION });
    await stopChild(hello);
    rows.push(row('express hello (reference)', reference, reference));

    const sqlite = await startChild(
      ['dist/main.js'],
      { ...serviceEnv, DATA_DIR: join(dir, 'sqlite'), STORAGE_BACKEND: 'sqlite' },
      '/health',
    );
    const s = await measureStorage('sqlite', `http://127.0.0.1:${sqlite.port}`);
    await stopChild(sqlite);
    rows.push(
      row('sqlite store (durable, group commit)', s.store, reference),
      row('sqlite retrieve', s.retrieve, reference),
      row('sqlite touch (durable, group commit)', s.touch, reference),
      row('sqlite delete (durable, group commit)', s.delete, reference),
    );

    const redisDir = join(dir, 'redis');
    rmSync(redisDir, { recursive: true, force: true });
    mkdirSync(redisDir);
    const redis = await startRedis({ durableDir: redisDir });
    try {
      notes.push(
        redis.source === 'REDIS_URL'
          ? 'Redis: the server REDIS_URL names, with its own persistence settings.'
          : `Redis: ${redis.source} started for the run with appendonly yes, appendfsync always (fsync before each reply).`,
      );
      const service = await startChild(
        ['dist/main.js'],
        {
          ...serviceEnv,
          DATA_DIR: join(dir, 'redis-app'),
          STORAGE_BACKEND: 'redis',
          REDIS_URL: redis.url,
          REDIS_KEY_PREFIX: `bench-${randomBytes(4).toString('hex')}:`,
        },
        '/health',
      );
      const r = await measureStorage('redis', `http://127.0.0.1:${service.port}`);
      await stopChild(service);
      rows.push(
        row('redis store', r.store, reference),
        row('redis retrieve', r.retrieve, reference),
        row('redis touch', r.touch, reference),
        row('redis delete', r.delete, reference),
      );
    } finally {
      await redis.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const report = [
    `# Storage benchmark`,
    '',
    `${CONNECTIONS} connections, ${DURATION} s per figure after a ${WARMUP} s warm-up, loopback, autocannon in the parent process,`,
    `each server in its own child process (Node ${process.version}). LOG_LEVEL=warn (no request lines), rate limit off.`,
    `Stores: unique 64-hex keys, 64-byte values, ttl 3600; a 200 means the value is durable (the load generator keeps each write token).`,
    `Retrieve and touch (ttl 7200, with the write token): keys of the measured store phase in turn. Delete: each of those keys once`,
    `(a fixed number of requests, not a duration). Touch and delete are durable before their 200, as stores are.`,
    '',
    '| scenario | req/s | express hello req/s (same run) | ratio | p50 ms | p99 ms | requests | non-2xx or errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    ...notes.map((n) => `- ${n}`),
    '',
  ].join('\n');
  writeFileSync(join(APP_DIR, 'bench-report.md'), report);
  process.stdout.write(report);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
