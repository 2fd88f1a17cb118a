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

/**
 * Starts a Bitcoin Core JSON-RPC double on a real HTTP server: Basic auth (401 with an empty
 * body, 250 ms late for wrong credentials), 405 for non-POST, 404 for unknown paths, JSON-RPC
 * 1.0/2.0/legacy envelopes, batches and notifications with Core 29.2's status codes, over a
 * chain of real blocks and transactions.
 */
export async function startChainDouble(options: ChainDoubleOptions = {}): Promise<ChainDouble> {
  const chain = new Chain({ chain: options.chain, initialBlocks: options.initialBlocks });
  const wallets = options.wallets ?? ['testwallet'];
  const authDelay = options.authFailureDelayMs ?? 250;
  const workQueue = options.workQueue ?? 0;
  let behaviour: Behaviour = 'normal';
  let latency = 0;
  let feeRate: number | undefined;
  let syncing: { headers: number; progress: number } | undefined;
  const requests: ReceivedRequest[] = [];
  const stats = { inFlight: 0, maxInFlight: 0, total: 0 };
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const credentials = { user: options.user ?? '__cookie__', password: options.password ?? '' };
  const cookieMode = options.user === undefined || options.password === undefined;
  function writeCookie(): string {
    credentials.user = '__cookie__';
    credentials.password = randomBytes(32).toString('hex');
    if (options.cookieFile !== undefined) {
      mkdirSync(dirname(options.cookieFile), { recursive: true });
      writeFileSync(options.cookieFile, `__cookie__:${credentials.password}`, { mode: 0o600 });
    }
    return credentials.password;
  }
  if (cookieMode) writeCookie();

  function later(ms: number, fn: () => void): void {
    if (ms <= 0) {
      fn();
      return;
    }
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  }

  function send(res: ServerResponse, status: number, body: string, headers: Record<string, string>): void {
    later(latency, () => {
      if (res.destroyed) return;
      res.writeHead(status, { ...headers, 'Content-Length': String(Buffer.byteLength(body)) });
      res.end(body);
    });
  }

  function sendJson(res: ServerResponse, status: number, value: unknown): void {
    send(res, status, `${writeJson(value)}\n`, JSON_HEADERS);
  }

  function execute(
    method: string,
    params: unknown[] | Record<string, unknown>,
    state: CallState,
    ctx: MethodContext,
    catchErrors: boolean,
  ) {
    try {
      return replyObject(executeMethod(method, params, ctx), null, state);
    } catch (err) {
      if (!catchErrors) throw err;
      if (err instanceof RpcMethodError) return replyObject(null, { code: err.code, message: err.message }, state);
      return replyObject(null, { code: -1, message: (err as Error).message }, state);
    }
  }

  /** Answers a body (undefined: one Core cannot read, a parse error). */
  function handleBody(res: ServerResponse, walletPath: string | undefined, body: string | undefined): void {
    const ctx: MethodContext = { chain, walletPath, wallets, feeRate, syncing };
    const state = initialState();
    try {
      let value: unknown;
      try {
        if (body === undefined) throw new Error('a string Core cannot read');
        value = JSON.parse(body);
      } catch {
        throw new EnvelopeError(-32700, 'Parse error');
      }
      if (Array.isArray(value)) {
        const replies: unknown[] = [];
        for (const element of value) {
          let reply: Record<string, unknown>;
          try {
            const { method, params } = parseCall(element, state);
            reply = execute(method, params, state, ctx, true);
          } catch (err) {
            const e = err as EnvelopeError;
            reply = replyObject(null, { code: e.code ?? -32700, message: e.message }, state);
          }
          if (!isNotification(state)) replies.push(reply);
        }
        if (replies.length === 0 && value.length > 0) {
          later(latency, () => {
            if (!res.destroyed) res.writeHead(204).end();
          });
          return;
        }
        sendJson(res, 200, replies);
        return;
      }
      if (value === null || typeof value !== 'object') throw new EnvelopeError(-32700, 'Top-level object parse error');
      const { method, params } = parseCall(value, state);
      const reply = execute(method, params, state, ctx, state.version === '2.0');
      if (isNotification(state)) {
        later(latency, () => {
          if (!res.destroyed) res.writeHead(204).end();
        });
        return;
      }
      sendJson(res, 200, reply);
    } catch (err) {
      const code = err instanceof EnvelopeError || err instanceof RpcMethodError ? err.code : -32603;
      sendJson(
        res,
        errorStatus(code, state, err instanceof EnvelopeError),
        replyObject(null, { code, message: (err as Error).message }, state),
      );
    }
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    if (behaviour === 'hang') {
      req.resume();
      return;
    }
    stats.inFlight++;
    stats.total++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    res.on('close', () => stats.inFlight--);
    if (behaviour === 'busy' || (workQueue > 0 && stats.inFlight > workQueue)) {
      req.resume();
      send(res, 503, 'Work queue depth exceeded', { 'Content-Type': TEXT_HTML });
      return;
    }
    if (behaviour === 'garbage') {
      req.resume();
      send(res, 200, '<html><body>502 Bad Gateway: not JSON at all</body></html>', { 'Content-Type': 'text/html' });
      return;
    }
    // libevent answers an unregistered path itself, before the JSON-RPC handler (and its auth).
    // Core matches the whole URI, query included: `/?x` is unknown, `/wallet/w?x` is wallet "w?x".
    const path = req.url ?? '/';
    let walletPath: string | undefined;
    if (path.startsWith('/wallet/')) walletPath = decodeURIComponent(path.slice('/wallet/'.length));
    else if (path !== '/') {
      req.resume();
      send(res, 404, '', { 'Content-Type': TEXT_HTML });
      return;
    }
    if (req.method !== 'POST') {
      req.resume();
      send(res, 405, 'JSONRPC server handles only POST requests', { 'Content-Type': TEXT_HTML });
      return;
    }
    const auth = req.headers.authorization;
    const unauthorized = () => send(res, 401, '', { 'WWW-Authenticate': WWW_AUTH, 'Content-Type': TEXT_HTML });
    if (auth === undefined) {
      req.resume();
      unauthorized();
      return;
    }
    const decoded = auth.startsWith('Basic ') ? checkBase64(auth.slice(6).trim()) : undefined;
    if (decoded === undefined || !constantTimeEqual(decoded.toString('latin1'), `${credentials.user}:${credentials.password}`)) {
      req.resume();
      later(authDelay, unauthorized);
      return;
    }
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
      requests.push({ method: req.method ?? 'POST', path, headers: { ...req.headers }, body });
      if (requests.length > 1000) requests.shift();
      // Core refuses a whole body with a string it cannot read as UTF-8 (see coreAcceptsStrings).
      handleBody(res, walletPath, coreAcceptsStrings(raw) ? body : undefined);
    });
  }

  const server: Server = createServer({ keepAliveTimeout: 30_000 }, onRequest);
  server.on('connection', (socket) => {
    if (behaviour === 'down') {
      socket.resetAndDestroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
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

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    chain,
    credentials,
    mine: (count, txHexes) => chain.mine(count, txHexes),
    fund: (kind, amountSats) => chain.fund(kind, amountSats),
    sendRawTransaction: (hex) => chain.sendRawTransaction(hex),
    reorg: (depth, replacementTxHexes) => chain.reorg(depth, replacementTxHexes),
    tipHeight: () => chain.tipHeight(),
    tipHash: () => chain.tipHash(),
    setBehaviour(next) {
      behaviour = next;
      if (next === 'down') for (const s of sockets) s.resetAndDestroy();
    },
    get behaviour() {
      return behaviour;
    },
    setLatency(ms) {
      latency = ms;
    },
    setFeeRate(rate) {
      feeRate = rate;
    },
    setInitialBlockDownload(state) {
      syncing = state === undefined ? undefined : { ...state };
    },
    rotateCookie() {
      if (!cookieMode) throw new Error('rotateCookie needs cookie mode (no user/password)');
      return writeCookie();
    },
    requests,
    stats,
    clearRequests() {
      requests.length = 0;
    },
    close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}
