import { Agent, request, type IncomingMessage } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import type { Logger } from '@repo/http';

/** Why a node call failed (each becomes -32603 with a message saying which). */
export type NodeFailure = 'unreachable' | 'timeout' | 'garbage' | 'busy' | 'auth' | 'queue';

/** A node call that failed; `message` is what the client reads. */
export class NodeError extends Error {
  override readonly name = 'NodeError';
  constructor(
    readonly kind: NodeFailure,
    message: string,
  ) {
    super(message);
  }
}

/** A JSON answer of the node: its status, exact bytes and parsed value. */
export interface NodeReply {
  status: number;
  body: Buffer;
  json: unknown;
}

/** Options of {@link createNodeClient}. */
export interface NodeClientOptions {
  url: URL;
  user?: string;
  password?: string;
  /** bitcoind's cookie file, re-read when it changes (a restarted node writes a new one). */
  cookieFile?: string;
  maxConcurrency: number;
  queueLimit: number;
  timeoutMs: number;
  logger: Logger;
}

/** Forwards JSON-RPC bodies to bitcoind over keep-alive connections, at most N at once. */
export interface NodeClient {
  call(path: string, body: string | Buffer): Promise<NodeReply>;
  readonly stats: { active: number; queued: number; maxActive: number };
  close(): void;
}

const COOKIE_RECHECK_MS = 1_000;

/**
 * Creates the node client. Calls beyond `maxConcurrency` wait in a FIFO queue (bitcoind
 * itself answers 503 past its -rpcworkqueue, so the proxy queues instead of overrunning it);
 * past `queueLimit` waiting, a call fails at once with kind `queue`.
 */
export function createNodeClient(options: NodeClientOptions): NodeClient {
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxConcurrency, maxFreeSockets: options.maxConcurrency, scheduling: 'lifo' });
  const stats = { active: 0, queued: 0, maxActive: 0 };
  const waiting: (() => void)[] = [];
  const host = options.url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(options.url.port || 80);

  let staticAuth: string | undefined;
  if (options.user !== undefined && options.password !== undefined) {
    staticAuth = `Basic ${Buffer.from(`${options.user}:${options.password}`).toString('base64')}`;
  }
  let cookieAuth: string | undefined;
  let cookieStamp = '';
  let cookieCheckedAt = 0;

  /** Re-reads the cookie file when its size or mtime changed; true when the credentials changed. */
  function refreshCookie(force: boolean): boolean {
    if (options.cookieFile === undefined) return false;
    const now = Date.now();
    if (!force && now - cookieCheckedAt < COOKIE_RECHECK_MS) return false;
    cookieCheckedAt = now;
    try {
      const st = statSync(options.cookieFile);
      const stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
      if (stamp === cookieStamp && !force) return false;
      cookieStamp = stamp;
      const next = `Basic ${Buffer.from(readFileSync(options.cookieFile, 'utf8').trim()).toString('base64')}`;
      const changed = next !== cookieAuth;
      if (changed && cookieAuth !== undefined) options.logger.info({ cookieFile: options.cookieFile }, 'node cookie file changed: using the new cookie');
      cookieAuth = next;
      return changed;
    } catch (err) {
      if (cookieAuth !== undefined) options.logger.warn({ cookieFile: options.cookieFile, code: (err as NodeJS.ErrnoException).code }, 'node cookie file unreadable');
      cookieAuth = undefined;
      return false;
    }
  }

  function authorization(): string | undefined {
    if (staticAuth !== undefined) return staticAuth;
    refreshCookie(false);
    return cookieAuth;
  }

  function acquire(): Promise<void> {
    if (stats.active < options.maxConcurrency) {
      stats.active++;
      stats.maxActive = Math.max(stats.maxActive, stats.active);
      return Promise.resolve();
    }
    if (waiting.length >= options.queueLimit) {
      return Promise.reject(new NodeError('queue', 'proxy queue full: too many requests waiting for the node'));
    }
    stats.queued++;
    return new Promise((resolve) => {
      waiting.push(() => {
        stats.queued--;
        resolve();
      });
    });
  }

  function release(): void {
    const next = waiting.shift();
    if (next) next();
    else stats.active--;
  }

  function send(path: string, body: string | Buffer, retried: { reset: boolean; auth: boolean }): Promise<NodeReply> {
    return new Promise<NodeReply>((resolve, reject) => {
      const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) };
      const auth = authorization();
      if (auth !== undefined) headers.Authorization = auth;
      let timedOut = false;
      const req = request({ agent, host, port, method: 'POST', path, headers });
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy();
      }, options.timeoutMs);
      const fail = (err: NodeError) => {
        clearTimeout(timer);
        reject(err);
      };
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (timedOut) return fail(new NodeError('timeout', `node timed out after ${options.timeoutMs} ms`));
        // A kept-alive socket the node closed while idle: the request never reached it, send again once.
        if (req.reusedSocket && err.code === 'ECONNRESET' && !retried.reset) {
          clearTimeout(timer);
          send(path, body, { ...retried, reset: true }).then(resolve, reject);
          return;
        }
        fail(new NodeError('unreachable', `node unreachable (${err.code ?? err.message})`));
      });
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => undefined);
        res.on('aborted', () => undefined);
        res.on('close', () => {
          if (!res.complete) {
            if (timedOut) return fail(new NodeError('timeout', `node timed out after ${options.timeoutMs} ms`));
            return fail(new NodeError('unreachable', 'node unreachable (connection closed mid-answer)'));
          }
        });
        res.on('end', () => {
          clearTimeout(timer);
          const status = res.statusCode ?? 0;
          const buf = Buffer.concat(chunks);
          if (status === 401 || status === 403) {
            if (!retried.auth && refreshCookie(true)) {
              send(path, body, { ...retried, auth: true }).then(resolve, reject);
              return;
            }
            return reject(new NodeError('auth', `node rejected the proxy's credentials (HTTP ${status})`));
          }
          if (status === 503) return reject(new NodeError('busy', 'node busy: work queue depth exceeded (HTTP 503)'));
          if (status === 204 && buf.length === 0) return resolve({ status, body: buf, json: undefined });
          let json: unknown;
          try {
            json = JSON.parse(buf.toString('utf8'));
          } catch {
            return reject(new NodeError('garbage', `node answered garbage (HTTP ${status}, not JSON)`));
          }
          if (json === null || typeof json !== 'object') return reject(new NodeError('garbage', `node answered garbage (HTTP ${status}, not a JSON-RPC reply)`));
          resolve({ status, body: buf, json });
        });
      });
      req.end(body);
    });
  }

  return {
    async call(path, body) {
      await acquire();
      try {
        return await send(path, body, { reset: false, auth: false });
      } finally {
        release();
      }
    },
    stats,
    close() {
      agent.destroy();
    },
  };
}
