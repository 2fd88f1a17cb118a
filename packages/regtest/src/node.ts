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

/** The node's fixed arguments: regtest, RPC on loopback, no peers, the transaction index. */
const NODE_ARGS = [
  '-regtest',
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
];

/** Every bitcoind started here and still running: killed when this process exits, so none outlives a crashed test run. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const proc of live) proc.kill('SIGKILL');
});

/** What a regtest node handle holds: how to start bitcoind, where it listens, the running process. */
interface NodeState {
  readonly bitcoind: string;
  readonly datadir: string;
  readonly cookieFile: string;
  readonly args: string[];
  readonly startTimeout: number;
  rpcPort: number;
  url: string;
  child: ChildProcess | undefined;
  exited: Promise<number | null> | undefined;
  stderr: string;
  auth: string;
}

/** An HTTP request to the node's RPC port, with the cookie's authorization unless `auth` says otherwise. */
async function post(state: NodeState, body: string, o: { path?: string; auth?: string | null; method?: string } = {}): Promise<RawReply> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  const a = o.auth === undefined ? state.auth : o.auth;
  if (a !== null) headers.Authorization = a;
  const method = o.method ?? 'POST';
  const res = await fetch(state.url + (o.path ?? '/'), { method, headers, body: method === 'GET' || method === 'HEAD' ? undefined : body });
  const buf = Buffer.from(await res.arrayBuffer());
  return { status: res.status, contentType: res.headers.get('content-type'), body: buf, text: buf.toString('utf8') };
}

/** A JSON-RPC call: its result, or a NodeRpcError with the node's code. */
async function rpc<T>(state: NodeState, method: string, params: unknown[] | Record<string, unknown> = [], wallet?: string): Promise<T> {
  const path = wallet === undefined ? '/' : `/wallet/${encodeURIComponent(wallet)}`;
  const reply = await post(state, JSON.stringify({ jsonrpc: '1.0', id: method, method, params }), { path });
  let parsed: { result: T; error: { code: number; message: string } | null };
  try {
    parsed = JSON.parse(reply.text) as typeof parsed;
  } catch {
    throw new Error(`${method}: HTTP ${reply.status} from bitcoind, not JSON: ${reply.text.slice(0, 200)}`);
  }
  if (parsed.error) throw new NodeRpcError(parsed.error.code, parsed.error.message, method);
  return parsed.result;
}

/** Starts bitcoind and resolves once its RPC answers (past Core's -28 "Loading" warm-up). */
async function startProcess(state: NodeState): Promise<void> {
  if (state.child !== undefined) return;
  state.stderr = '';
  const proc = spawn(state.bitcoind, [...state.args, `-rpcport=${state.rpcPort}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  state.child = proc;
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  proc.stderr.on('data', (c: Buffer) => {
    if (state.stderr.length < 10_000) state.stderr += c.toString();
  });
  state.exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
  void state.exited.then(() => {
    if (state.child === proc) state.child = undefined;
  });
  const deadline = Date.now() + state.startTimeout;
  for (;;) {
    if (state.child !== proc) {
      throw new Error(
        `bitcoind exited before its RPC answered: ${state.stderr.trim() || 'no stderr'} (see ${state.datadir}/regtest/debug.log)`,
      );
    }
    if (Date.now() > deadline) {
      await stopProcess(state);
      throw new Error(`bitcoind's RPC did not answer within ${state.startTimeout} ms`);
    }
    try {
      state.auth = `Basic ${Buffer.from(readFileSync(state.cookieFile, 'utf8').trim()).toString('base64')}`;
      await rpc(state, 'getblockchaininfo');
      return;
    } catch {
      // cookie not written yet, connection refused, or -28 while loading: bitcoind says nothing else
    }
    await sleep(50);
  }
}

/** Stops bitcoind: `stop` over RPC, then SIGTERM, then SIGKILL. */
async function stopProcess(state: NodeState): Promise<void> {
  const proc = state.child;
  if (proc === undefined) return;
  const done = state.exited!;
  const within = (ms: number) =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void done.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  try {
    await rpc(state, 'stop');
  } catch {
    proc.kill('SIGTERM');
  }
  if (await within(30_000)) return;
  proc.kill('SIGTERM');
  if (await within(10_000)) return;
  proc.kill('SIGKILL');
  await done;
}

/**
 * Starts bitcoind on regtest in a new temporary datadir: `-txindex=1 -fallbackfee=0.0001
 * -listen=0`, RPC on a free port of 127.0.0.1 with cookie authentication (no -rpcuser), no
 * peers, and waits until `getblockchaininfo` answers (past Core's -28 "Loading" warm-up).
 */
export async function startRegtestNode(options: RegtestNodeOptions = {}): Promise<RegtestNode> {
  const keep = options.datadir !== undefined;
  if (keep) mkdirSync(options.datadir!, { recursive: true });
  const datadir = options.datadir ?? mkdtempSync(join(tmpdir(), 'regtest-'));
  const rpcPort = options.rpcPort ?? (await freePort());
  const state: NodeState = {
    bitcoind: options.bitcoind ?? requireBitcoind(),
    datadir,
    cookieFile: join(datadir, 'regtest', '.cookie'),
    args: [...NODE_ARGS, `-datadir=${datadir}`, ...(options.args ?? [])],
    startTimeout: options.startTimeoutMs ?? 60_000,
    rpcPort,
    url: `http://127.0.0.1:${rpcPort}`,
    child: undefined,
    exited: undefined,
    stderr: '',
    auth: '',
  };
  // The port was free when chosen; another process may take it before bitcoind binds it: try another.
  for (let attempt = 1; ; attempt++) {
    try {
      await startProcess(state);
      break;
    } catch (err) {
      if (attempt >= 3 || !/Unable to start HTTP server|Unable to bind/i.test(state.stderr)) {
        if (!keep) rmSync(datadir, { recursive: true, force: true });
        throw err;
      }
      state.rpcPort = await freePort();
      state.url = `http://127.0.0.1:${state.rpcPort}`;
    }
  }
  return {
    datadir,
    get rpcPort() {
      return state.rpcPort;
    },
    get url() {
      return state.url;
    },
    cookieFile: state.cookieFile,
    get pid() {
      return state.child?.pid;
    },
    authorization: () => state.auth,
    rpc: (method, params, wallet) => rpc(state, method, params, wallet),
    post: (body, o) => post(state, body, o),
    stop: () => stopProcess(state),
    start: () => startProcess(state),
    async restart() {
      await stopProcess(state);
      await startProcess(state);
    },
    async close() {
      await stopProcess(state);
      if (!keep) rmSync(datadir, { recursive: true, force: true });
    },
  };
}
