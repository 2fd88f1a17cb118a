import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { ANSWERED_EVENT, type AnsweredExchange, type RecordedExchange } from '../index';

/** One exchange as the server saw it: the request line and body, the response status, headers and body. */
export type { RecordedExchange };

/** Judges one exchange: the problems found (empty when the document describes it). */
export type ExchangeCheck = (exchange: RecordedExchange) => string[];

/** Collects every exchange of the servers it is attached to and checks each against a document. */
export interface ContractRecorder {
  /** Records every response `server` sends from now on (added before the app's own listener). */
  attach(server: Server): void;
  /** A new (not listening) HTTP server for `listener` (an express app), recorded: for supertest. */
  server(listener: RequestListener): Server;
  /** The exchanges checked so far. */
  readonly checked: number;
  /** The problems found so far, one line each. */
  readonly problems: readonly string[];
  /** Throws, listing every problem, when a response was not described; returns the count checked. */
  verify(): number;
}

const MAX_RECORDED_BYTES = 8 * 1024 * 1024;

/** The headers of a response head as written (status line, then `name: value` lines). */
function headRecord(head: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    out[name] = out[name] === undefined ? value : `${out[name]}, ${value}`;
  }
  return out;
}

/**
 * The headers as sent: parsed from the head node wrote (it holds those passed to `writeHead` too,
 * which `getHeaders()` does not), else `getHeaders()`.
 */
function headerRecord(res: ServerResponse): Record<string, string> {
  const head = (res as unknown as { _header?: unknown })._header;
  if (typeof head === 'string' && head.length > 0) return headRecord(head);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.getHeaders())) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

function toBuffer(chunk: unknown, encoding?: unknown): Buffer | undefined {
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return undefined;
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk);
  // res.write and res.end take strings besides bytes (node's own types say so).
  if (typeof chunk !== 'string') return undefined;
  return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
}

/**
 * A recorder that checks each response as it finishes with `check`: wire it into an app's test
 * harness (attach it to every server the harness starts) and call `verify()` after the suite, so
 * every response the suite provoked is held against the document.
 */
export function createContractRecorder(check: ExchangeCheck, options: { name?: string } = {}): ContractRecorder {
  const problems: string[] = [];
  let checked = 0;
  const attached = new WeakSet<Server>();

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const requestChunks: Buffer[] = [];
    const responseChunks: Buffer[] = [];
    let responseBytes = 0;
    // Seen, not consumed: the app's body parser still reads the stream as before.
    const emit = req.emit.bind(req);
    req.emit = ((event: string | symbol, ...args: unknown[]) => {
      if (event === 'data') {
        const b = toBuffer(args[0]);
        if (b) requestChunks.push(b);
      }
      return emit(event, ...args);
    }) as typeof req.emit;
    const keep = (chunk: unknown, encoding?: unknown): void => {
      const b = toBuffer(chunk, encoding);
      if (b && responseBytes < MAX_RECORDED_BYTES) {
        responseChunks.push(b);
        responseBytes += b.length;
      }
    };
    const write = res.write.bind(res) as (...a: unknown[]) => boolean;
    const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
    res.write = ((...a: unknown[]) => {
      keep(a[0], a[1]);
      return write(...a);
    }) as typeof res.write;
    res.end = ((...a: unknown[]) => {
      keep(a[0], a[1]);
      return end(...a);
    }) as typeof res.end;
    let done = false;
    const finish = (complete: boolean): void => {
      if (done) return;
      done = true;
      if (!res.headersSent) return; // nothing reached the client
      const exchange: RecordedExchange = {
        method: req.method ?? 'GET',
        path: (req.url ?? '/').split('?')[0] ?? '/',
        requestBody: Buffer.concat(requestChunks),
        status: res.statusCode,
        headers: headerRecord(res),
        body: Buffer.concat(responseChunks),
        complete,
      };
      checked += 1;
      for (const problem of check(exchange)) problems.push(`${exchange.method} ${exchange.path} → ${exchange.status}: ${problem}`);
    };
    res.once('finish', () => finish(true));
    res.once('close', () => finish(res.writableFinished));
  }

  return {
    attach(server) {
      if (attached.has(server)) return;
      attached.add(server);
      server.prependListener('request', onRequest);
      // Answers written without node:http's response objects (ANSWERED_EVENT).
      server.on(ANSWERED_EVENT, ({ head, ...answered }: AnsweredExchange) => {
        const exchange: RecordedExchange = { ...answered, headers: headRecord(head) };
        checked += 1;
        for (const problem of check(exchange)) problems.push(`${exchange.method} ${exchange.path} → ${exchange.status}: ${problem}`);
      });
    },
    server(listener) {
      const server = createServer(listener);
      this.attach(server);
      return server;
    },
    get checked() {
      return checked;
    },
    get problems() {
      return problems;
    },
    verify() {
      if (problems.length > 0) {
        const shown = problems.slice(0, 30).join('\n  ');
        const more = problems.length > 30 ? `\n  … and ${problems.length - 30} more` : '';
        throw new Error(`${options.name ?? 'API document'}: ${problems.length} of ${checked} responses not described:\n  ${shown}${more}`);
      }
      return checked;
    },
  };
}

/** Checks messages (WebSocket frames) as a test client receives them, against a document. */
export interface MessageRecorder {
  /** Checks one received message (already parsed). */
  record(message: unknown): void;
  readonly checked: number;
  readonly problems: readonly string[];
  /** Throws, listing every problem, when a message was not described; returns the count checked. */
  verify(): number;
}

/** A {@link MessageRecorder} checking each message with `check` (see `createAsyncApiMessageCheck`). */
export function createMessageRecorder(check: (message: unknown) => string[], options: { name?: string } = {}): MessageRecorder {
  const problems: string[] = [];
  let checked = 0;
  return {
    record(message) {
      checked += 1;
      problems.push(...check(message));
    },
    get checked() {
      return checked;
    },
    get problems() {
      return problems;
    },
    verify() {
      if (problems.length > 0) {
        const shown = problems.slice(0, 30).join('\n  ');
        throw new Error(`${options.name ?? 'API document'}: ${problems.length} of ${checked} messages not described:\n  ${shown}`);
      }
      return checked;
    },
  };
}
