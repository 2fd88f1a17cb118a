import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireBitcoind } from './find';
import { freePort } from './port';

/** Options of {@link startRegtestNode}. */
export interface RegtestNodeOptions {
  /** Path of bitcoind; default: BITCOIND, else bitcoind on PATH ({@link requireBitcoind}). */
  bitcoind?: string;
  /** Extra command-line arguments (`-rpcworkqueue=2`, …). */
  args?: string[];
  /** RPC port to try first (default: a free one); when it cannot be bound, another free one is taken. */
  rpcPort?: number;
  /** How long to wait for the RPC server to answer (ms, default 60 s). */
  startTimeoutMs?: number;
  /** A data directory to use and keep (a cached chain); default: a new temporary one, removed by close(). */
  datadir?: string;
}

/** A raw HTTP exchange with the node: status, content type and exact body bytes. */
export interface RawReply {
  status: number;
  contentType: string | null;
  body: Buffer;
  text: string;
}

/** A JSON-RPC error the node answered (`code`, `message` as Core sends them). */
export class NodeRpcError extends Error {
  override readonly name = 'NodeRpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly method: string,
  ) {
    super(`${method}: ${message} (${code})`);
  }
}

/** A throw-away regtest bitcoind. */
export interface RegtestNode {
  /** Temporary data directory (removed by {@link close}). */
  readonly datadir: string;
  readonly rpcPort: number;
  /** `http://127.0.0.1:<rpcPort>`. */
  readonly url: string;
  /** `<datadir>/regtest/.cookie`: rewritten with a new secret at every start. */
  readonly cookieFile: string;
  /** The PID of the running bitcoind, undefined while stopped. */
  readonly pid: number | undefined;
  /** `Authorization` value of the current cookie. */
  authorization(): string;
  /** Calls `method` (JSON-RPC 1.0, as bitcoin-cli); `wallet` routes to `/wallet/<name>`. Throws NodeRpcError. */
  rpc<T = unknown>(method: string, params?: unknown[] | Record<string, unknown>, wallet?: string): Promise<T>;
  /** POSTs `body` as written to `path` (default `/`) with the cookie (or `auth`; null: none). */
  post(body: string, options?: { path?: string; auth?: string | null; method?: string }): Promise<RawReply>;
  /** Stops bitcoind (`stop`, then SIGTERM, then SIGKILL); the datadir stays. */
  stop(): Promise<void>;
  /** Starts bitcoind again on the same datadir and port, and waits for RPC. */
  start(): Promise<void>;
  /** stop() then start(). */
  restart(): Promise<void>;
  /** Stops bitcoind and removes the datadir. */
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every bitcoind started here and still running: killed when this process exits, so none outlives a crashed test run. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const proc of live) proc.kill('SIGKILL');
});

/**
 * Starts bitcoind on regtest in a new temporary datadir: `-txindex=1 -fallbackfee=0.0001
 * -listen=0`, RPC on a free port of 127.0.0.1 with cookie authentication (no -rpcuser), no
 * peers, and waits until `getblockchaininfo` answers (past Core's -28 "Loading" warm-up).
 */
export async function startRegtestNode(options: RegtestNodeOptions = {}): Promise<RegtestNode> {
  const bitcoind = options.bitcoind ?? requireBitcoind();
  const keep = options.datadir !== undefined;
  if (keep) mkdirSync(options.datadir!, { recursive: true });
  const datadir = options.datadir ?? mkdtempSync(join(tmpdir(), 'regtest-'));
  let rpcPort = options.rpcPort ?? (await freePort());
  let url = `http://127.0.0.1:${rpcPort}`;
  const cookieFile = join(datadir, 'regtest', '.cookie');
  const args = [
    '-regtest',
    `-datadir=${datadir}`,
    '-server=1',
    '-txindex=1',
    '-fallbackfee=0.0001',
    '-listen=0',
    '-dnsseed=0',
    '-fixedseeds=0',
    '-discover=0',
    '-upnp=0',
    '-natpmp=0',
    '-printtoconsole=0',
    '-rpcbind=127.0.0.1',
    '-rpcallowip=127.0.0.1',
    ...(options.args ?? []),
  ];
  const startTimeout = options.startTimeoutMs ?? 60_000;
  let child: ChildProcess | undefined;
  let exited: Promise<number | null> | undefined;
  let stderr = '';
  let auth = '';

  function readCookie(): string {
    return `Basic ${Buffer.from(readFileSync(cookieFile, 'utf8').trim()).toString('base64')}`;
  }

  async function post(body: string, o: { path?: string; auth?: string | null; method?: string } = {}): Promise<RawReply> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    const a = o.auth === undefined ? auth : o.auth;
    if (a !== null) headers.Authorization = a;
    const method = o.method ?? 'POST';
    const res = await fetch(url + (o.path ?? '/'), { method, headers, body: method === 'GET' || method === 'HEAD' ? undefined : body });
    const buf = Buffer.from(await res.arrayBuffer());
    return { status: res.status, contentType: res.headers.get('content-type'), body: buf, text: buf.toString('utf8') };
  }

  async function rpc<T>(method: string, params: unknown[] | Record<string, unknown> = [], wallet?: string): Promise<T> {
    const path = wallet === undefined ? '/' : `/wallet/${encodeURIComponent(wallet)}`;
    const reply = await post(JSON.stringify({ jsonrpc: '1.0', id: method, method, params }), { path });
    let parsed: { result: T; error: { code: number; message: string } | null };
    try {
      parsed = JSON.parse(reply.text) as typeof parsed;
    } catch {
      throw new Error(`${method}: HTTP ${reply.status} from bitcoind, not JSON: ${reply.text.slice(0, 200)}`);
    }
    if (parsed.error) throw new NodeRpcError(parsed.error.code, parsed.error.message, method);
    return parsed.result;
  }

  async function start(): Promise<void> {
    if (child !== undefined) return;
    stderr = '';
    const proc = spawn(bitcoind, [...args, `-rpcport=${rpcPort}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    live.add(proc);
    proc.once('exit', () => live.delete(proc));
    proc.stderr.on('data', (c: Buffer) => {
      if (stderr.length < 10_000) stderr += c.toString();
    });
    exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
    void exited.then(() => {
      if (child === proc) child = undefined;
    });
    const deadline = Date.now() + startTimeout;
    for (;;) {
      if (child !== proc)
        throw new Error(`bitcoind exited before its RPC answered: ${stderr.trim() || 'no stderr'} (see ${datadir}/regtest/debug.log)`);
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`bitcoind's RPC did not answer within ${startTimeout} ms`);
      }
      try {
        auth = readCookie();
        await rpc('getblockchaininfo');
        return;
      } catch {
        // cookie not written yet, connection refused, or -28 while loading
      }
      await sleep(50);
    }
  }

  async function stop(): Promise<void> {
    const proc = child;
    if (proc === undefined) return;
    const done = exited!;
    const within = (ms: number) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        void done.then(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    try {
      await rpc('stop');
    } catch {
      proc.kill('SIGTERM');
    }
    if (await within(30_000)) return;
    proc.kill('SIGTERM');
    if (await within(10_000)) return;
    proc.kill('SIGKILL');
    await done;
  }

  // The port was free when chosen; another process may take it before bitcoind binds it: try another.
  for (let attempt = 1; ; attempt++) {
    try {
      await start();
      break;
    } catch (err) {
      if (attempt >= 3 || !/Unable to start HTTP server|Unable to bind/i.test(stderr)) {
        if (!keep) rmSync(datadir, { recursive: true, force: true });
        throw err;
      }
      rpcPort = await freePort();
      url = `http://127.0.0.1:${rpcPort}`;
    }
  }
  return {
    datadir,
    get rpcPort() {
      return rpcPort;
    },
    get url() {
      return url;
    },
    cookieFile,
    get pid() {
      return child?.pid;
    },
    authorization: () => auth,
    rpc,
    post,
    stop,
    start,
    async restart() {
      await stop();
      await start();
    },
    async close() {
      await stop();
      if (!keep) rmSync(datadir, { recursive: true, force: true });
    },
  };
}
