import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Chain, type ChainName, type FundKind, type FundedOutput } from './chain';
import { writeJson } from './encoding';
import {
  coreAcceptsStrings,
  EnvelopeError,
  errorStatus,
  initialState,
  isNotification,
  parseCall,
  replyObject,
  type CallState,
} from '@repo/json-rpc';
import { executeMethod, RpcMethodError, type MethodContext } from './rpc';

/** How the double misbehaves: see {@link ChainDouble.setBehaviour}. */
export type Behaviour = 'normal' | 'down' | 'hang' | 'garbage' | 'busy';

/** Options of {@link startChainDouble}. */
export interface ChainDoubleOptions {
  port?: number;
  host?: string;
  /** RPC credentials (Basic auth), like `-rpcuser`/`-rpcpassword`. */
  user?: string;
  password?: string;
  /** Without user/password: write `__cookie__:<64 hex>` here (mode 0600) like bitcoind's `.cookie`. */
  cookieFile?: string;
  chain?: ChainName;
  /** Blocks mined at start (default 101, so coinbase outputs are spendable). */
  initialBlocks?: number;
  /** Loaded wallets (default `['testwallet']`; the first holds the miner key). */
  wallets?: string[];
  /** Delay before a 401 for wrong credentials, like bitcoind's 250 ms. */
  authFailureDelayMs?: number;
  /** Requests handled at once before answering 503 "Work queue depth exceeded" (Core's -rpcworkqueue; 0 = no limit, the default). */
  workQueue?: number;
}

/** A request the double received (for tests: what a proxy forwarded). */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** The running double. */
export interface ChainDouble {
  /** `http://host:port`. */
  readonly url: string;
  readonly port: number;
  /** The chain state (blocks, UTXO set, mempool) for direct inspection. */
  readonly chain: Chain;
  /** Credentials clients must send: `user:password` (or `__cookie__:<hex>`). */
  readonly credentials: { user: string; password: string };
  /** Mines `count` blocks (mempool and `txHexes` in the first); returns their hashes. */
  mine(count?: number, txHexes?: string[]): string[];
  /** A fresh key of `kind` and a confirmed output paying it. */
  fund(kind: FundKind, amountSats?: bigint): FundedOutput;
  /** Into the mempool with sendrawtransaction's checks; returns the txid. Throws ChainError. */
  sendRawTransaction(hex: string): string;
  /** Replaces the last `depth` blocks with `depth + 1` new ones; returns their hashes. */
  reorg(depth: number, replacementTxHexes?: string[]): string[];
  tipHeight(): number;
  tipHash(): string;
  /**
   * down: every connection (open ones too) is reset; hang: requests are read and never
   * answered; garbage: 200 with a non-JSON body; busy: 503 "Work queue depth exceeded".
   */
  setBehaviour(behaviour: Behaviour): void;
  readonly behaviour: Behaviour;
  /** Delay every answer by `ms` (to observe concurrency). */
  setLatency(ms: number): void;
  /** Makes estimatesmartfee answer this rate (BTC/kvB); undefined: "Insufficient data". */
  setFeeRate(btcPerKvB: number | undefined): void;
  /**
   * Simulates a node in its initial block download: getblockchaininfo answers
   * `initialblockdownload: true`, `headers` (at least the tip) and `verificationprogress` as
   * given; undefined: synced again (as judged from the tip's age, like Core).
   */
  setInitialBlockDownload(state: { headers: number; progress: number } | undefined): void;
  /** Writes a new cookie (cookie mode only) and accepts only it from now on. */
  rotateCookie(): string;
  /** The last requests received (at most 1000), oldest first. */
  readonly requests: ReceivedRequest[];
  /** Requests being handled now, and the most seen at once. */
  readonly stats: { inFlight: number; maxInFlight: number; total: number };
  clearRequests(): void;
  close(): Promise<void>;
}

const JSON_HEADERS = { 'Content-Type': 'application/json' };
const TEXT_HTML = 'text/html; charset=ISO-8859-1';
const WWW_AUTH = 'Basic realm="jsonrpc"';
const MAX_BODY = 0x02000000; // Core's MAX_SIZE, 32 MiB

function checkBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}

function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  // Compare against itself on a length mismatch so the time does not depend on where they differ.
  return timingSafeEqual(x, x.length === y.length ? y : x) && x.length === y.length;
}

/** What a running double holds: its chain and the behaviour the test set, its counters and its sockets. */
interface DoubleState {
  readonly options: ChainDoubleOptions;
  readonly chain: Chain;
  readonly wallets: string[];
  readonly authDelay: number;
  readonly workQueue: number;
  readonly cookieMode: boolean;
  readonly credentials: { user: string; password: string };
  behaviour: Behaviour;
  latency: number;
  feeRate: number | undefined;
  syncing: { headers: number; progress: number } | undefined;
  readonly requests: ReceivedRequest[];
  readonly stats: { inFlight: number; maxInFlight: number; total: number };
  readonly sockets: Set<Socket>;
  readonly timers: Set<NodeJS.Timeout>;
}

/** A fresh cookie, written to the cookie file when one is configured; returns its password. */
function writeCookie(state: DoubleState): string {
  state.credentials.user = '__cookie__';
  state.credentials.password = randomBytes(32).toString('hex');
  const { cookieFile } = state.options;
  if (cookieFile !== undefined) {
    mkdirSync(dirname(cookieFile), { recursive: true });
    writeFileSync(cookieFile, `__cookie__:${state.credentials.password}`, { mode: 0o600 });
  }
  return state.credentials.password;
}

/** Runs `fn` after `ms` (at once for 0), on a timer `close()` clears. */
function later(state: DoubleState, ms: number, fn: () => void): void {
  if (ms <= 0) {
    fn();
    return;
  }
  const t = setTimeout(() => {
    state.timers.delete(t);
    fn();
  }, ms);
  state.timers.add(t);
}

/** Writes an answer after the configured latency, unless the client went away. */
function send(state: DoubleState, res: ServerResponse, status: number, body: string, headers: Record<string, string>): void {
  later(state, state.latency, () => {
    if (res.destroyed) return;
    res.writeHead(status, { ...headers, 'Content-Length': String(Buffer.byteLength(body)) });
    res.end(body);
  });
}

function sendJson(state: DoubleState, res: ServerResponse, status: number, value: unknown): void {
  send(state, res, status, `${writeJson(value)}\n`, JSON_HEADERS);
}

/** 204 with no body, as Core answers a request of notifications only. */
function sendNoContent(state: DoubleState, res: ServerResponse): void {
  later(state, state.latency, () => {
    if (!res.destroyed) res.writeHead(204).end();
  });
}

function execute(method: string, params: unknown[] | Record<string, unknown>, state: CallState, ctx: MethodContext, catchErrors: boolean) {
  try {
    return replyObject(executeMethod(method, params, ctx), null, state);
  } catch (err) {
    if (!catchErrors) throw err;
    if (err instanceof RpcMethodError) return replyObject(null, { code: err.code, message: err.message }, state);
    return replyObject(null, { code: -1, message: (err as Error).message }, state);
  }
}

/** The replies to a batch, notifications left out. */
function batchReplies(value: unknown[], call: CallState, ctx: MethodContext): unknown[] {
  const replies: unknown[] = [];
  for (const element of value) {
    let reply: Record<string, unknown>;
    try {
      const { method, params } = parseCall(element, call);
      reply = execute(method, params, call, ctx, true);
    } catch (err) {
      const e = err as EnvelopeError;
      reply = replyObject(null, { code: e.code ?? -32700, message: e.message }, call);
    }
    if (!isNotification(call)) replies.push(reply);
  }
  return replies;
}

/** Answers a body (undefined: one Core cannot read, a parse error). */
function handleBody(state: DoubleState, res: ServerResponse, walletPath: string | undefined, body: string | undefined): void {
  const { chain, wallets, feeRate, syncing } = state;
  const ctx: MethodContext = { chain, walletPath, wallets, feeRate, syncing };
  const call = initialState();
  try {
    let value: unknown;
    try {
      if (body === undefined) throw new Error('a string Core cannot read');
      value = JSON.parse(body);
    } catch {
      throw new EnvelopeError(-32700, 'Parse error');
    }
    if (Array.isArray(value)) {
      const replies = batchReplies(value, call, ctx);
      if (replies.length === 0 && value.length > 0) sendNoContent(state, res);
      else sendJson(state, res, 200, replies);
      return;
    }
    if (value === null || typeof value !== 'object') throw new EnvelopeError(-32700, 'Top-level object parse error');
    const { method, params } = parseCall(value, call);
    const reply = execute(method, params, call, ctx, call.version === '2.0');
    if (isNotification(call)) sendNoContent(state, res);
    else sendJson(state, res, 200, reply);
  } catch (err) {
    const code = err instanceof EnvelopeError || err instanceof RpcMethodError ? err.code : -32603;
    sendJson(
      state,
      res,
      errorStatus(code, call, err instanceof EnvelopeError),
      replyObject(null, { code, message: (err as Error).message }, call),
    );
  }
}

/**
 * What a request gets before its body is read: an answer for a behaviour the test set, a path or
 * method Core refuses, or missing or wrong credentials (true), or nothing yet (false).
 */
function answeredBeforeBody(state: DoubleState, req: IncomingMessage, res: ServerResponse, path: string): boolean {
  const refuse = (status: number, body: string, headers: Record<string, string>, delay = 0) => {
    req.resume();
    later(state, delay, () => send(state, res, status, body, headers));
    return true;
  };
  if (state.behaviour === 'busy' || (state.workQueue > 0 && state.stats.inFlight > state.workQueue)) {
    return refuse(503, 'Work queue depth exceeded', { 'Content-Type': TEXT_HTML });
  }
  if (state.behaviour === 'garbage') {
    return refuse(200, '<html><body>502 Bad Gateway: not JSON at all</body></html>', { 'Content-Type': 'text/html' });
  }
  // libevent answers an unregistered path itself, before the JSON-RPC handler (and its auth).
  if (!path.startsWith('/wallet/') && path !== '/') return refuse(404, '', { 'Content-Type': TEXT_HTML });
  if (req.method !== 'POST') return refuse(405, 'JSONRPC server handles only POST requests', { 'Content-Type': TEXT_HTML });
  const unauthorized = { 'WWW-Authenticate': WWW_AUTH, 'Content-Type': TEXT_HTML };
  const auth = req.headers.authorization;
  if (auth === undefined) return refuse(401, '', unauthorized);
  const decoded = auth.startsWith('Basic ') ? checkBase64(auth.slice(6).trim()) : undefined;
  const { user, password } = state.credentials;
  if (decoded === undefined || !constantTimeEqual(decoded.toString('latin1'), `${user}:${password}`)) {
    return refuse(401, '', unauthorized, state.authDelay);
  }
  return false;
}

function onRequest(state: DoubleState, req: IncomingMessage, res: ServerResponse): void {
  if (state.behaviour === 'hang') {
    req.resume();
    return;
  }
  const { stats } = state;
  stats.inFlight++;
  stats.total++;
  stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
  res.on('close', () => stats.inFlight--);
  // Core matches the whole URI, query included: `/?x` is unknown, `/wallet/w?x` is wallet "w?x".
  const path = req.url ?? '/';
  if (answeredBeforeBody(state, req, res, path)) return;
  const walletPath = path.startsWith('/wallet/') ? decodeURIComponent(path.slice('/wallet/'.length)) : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BODY) {
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    const body = raw.toString('utf8');
    state.requests.push({ method: req.method ?? 'POST', path, headers: { ...req.headers }, body });
    if (state.requests.length > 1000) state.requests.shift();
    // Core refuses a whole body with a string it cannot read as UTF-8 (see coreAcceptsStrings).
    handleBody(state, res, walletPath, coreAcceptsStrings(raw) ? body : undefined);
  });
}

/**
 * Starts a Bitcoin Core JSON-RPC double on a real HTTP server: Basic auth (401 with an empty
 * body, 250 ms late for wrong credentials), 405 for non-POST, 404 for unknown paths, JSON-RPC
 * 1.0/2.0/legacy envelopes, batches and notifications with Core 29.2's status codes, over a
 * chain of real blocks and transactions.
 */
export async function startChainDouble(options: ChainDoubleOptions = {}): Promise<ChainDouble> {
  const state: DoubleState = {
    options,
    chain: new Chain({ chain: options.chain, initialBlocks: options.initialBlocks }),
    wallets: options.wallets ?? ['testwallet'],
    authDelay: options.authFailureDelayMs ?? 250,
    workQueue: options.workQueue ?? 0,
    cookieMode: options.user === undefined || options.password === undefined,
    credentials: { user: options.user ?? '__cookie__', password: options.password ?? '' },
    behaviour: 'normal',
    latency: 0,
    feeRate: undefined,
    syncing: undefined,
    requests: [],
    stats: { inFlight: 0, maxInFlight: 0, total: 0 },
    sockets: new Set(),
    timers: new Set(),
  };
  if (state.cookieMode) writeCookie(state);
  const server: Server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => onRequest(state, req, res));
  server.on('connection', (socket) => {
    if (state.behaviour === 'down') {
      socket.resetAndDestroy();
      return;
    }
    state.sockets.add(socket);
    socket.on('close', () => state.sockets.delete(socket));
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return doubleHandle(state, server, `http://${host}:${address.port}`, address.port);
}

/** The test's handle on a running double. */
function doubleHandle(state: DoubleState, server: Server, url: string, port: number): ChainDouble {
  const { chain } = state;
  return {
    url,
    port,
    chain,
    credentials: state.credentials,
    mine: (count, txHexes) => chain.mine(count, txHexes),
    fund: (kind, amountSats) => chain.fund(kind, amountSats),
    sendRawTransaction: (hex) => chain.sendRawTransaction(hex),
    reorg: (depth, replacementTxHexes) => chain.reorg(depth, replacementTxHexes),
    tipHeight: () => chain.tipHeight(),
    tipHash: () => chain.tipHash(),
    setBehaviour(next) {
      state.behaviour = next;
      if (next === 'down') for (const s of state.sockets) s.resetAndDestroy();
    },
    get behaviour() {
      return state.behaviour;
    },
    setLatency(ms) {
      state.latency = ms;
    },
    setFeeRate(rate) {
      state.feeRate = rate;
    },
    setInitialBlockDownload(syncing) {
      state.syncing = syncing === undefined ? undefined : { ...syncing };
    },
    rotateCookie() {
      if (!state.cookieMode) throw new Error('rotateCookie needs cookie mode (no user/password)');
      return writeCookie(state);
    },
    requests: state.requests,
    stats: state.stats,
    clearRequests() {
      state.requests.length = 0;
    },
    close() {
      for (const t of state.timers) clearTimeout(t);
      state.timers.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of state.sockets) s.destroy();
      });
    },
  };
}
