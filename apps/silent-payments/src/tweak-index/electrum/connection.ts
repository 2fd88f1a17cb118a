import { once } from 'node:events';
import type { Socket } from 'node:net';
import type { Logger } from '@repo/service';
import { ElectrumError, RPC_ERRORS, type ElectrumContext, type ElectrumMethod, type ElectrumSettings, type IndexFeed } from './protocol';

type Id = number | string | null;

/** A request line read: what to answer it with, or the call to make. */
type Parsed = { error: ElectrumError; id: Id } | { id: Id; method: string; params: unknown[] };

function parseLine(line: string): Parsed {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return { id: null, error: new ElectrumError(RPC_ERRORS.parse, 'the line is not JSON') };
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    return { id: null, error: new ElectrumError(RPC_ERRORS.invalidRequest, 'a request is one JSON object (batches are not served)') };
  }
  const { id = null, method, params = [] } = message as { id?: unknown; method?: unknown; params?: unknown };
  const validId: Id = typeof id === 'number' || typeof id === 'string' ? id : null;
  if (typeof method !== 'string') return { id: validId, error: new ElectrumError(RPC_ERRORS.invalidRequest, '"method" must be a string') };
  if (!Array.isArray(params)) return { id: validId, error: new ElectrumError(RPC_ERRORS.invalidParams, '"params" must be an array') };
  return { id: validId, method, params };
}

/**
 * Serves one Electrum connection: newline-delimited JSON-RPC requests in, answers and
 * notifications out, with the per-connection limits of `settings.limits`
 * (docs/silent-payments.md, "Electrum": "Limits").
 */
export function serveElectrumConnection(
  socket: Socket,
  methods: ReadonlyMap<string, ElectrumMethod>,
  feed: IndexFeed,
  settings: ElectrumSettings,
  logger: Logger,
): void {
  const { limits } = settings;
  const cleanups: Array<() => void> = [];
  let closed = false;
  let pending = 0;
  let buffered: Buffer = Buffer.alloc(0);

  const close = (): void => {
    if (closed) return;
    closed = true;
    for (const cleanup of cleanups.splice(0)) cleanup();
    socket.destroy();
  };
  socket.on('close', close);
  socket.on('error', close);

  /** Writes one message; a client whose unread bytes pass the limit is disconnected. */
  const send = (message: object): boolean => {
    if (closed) return false;
    socket.write(`${JSON.stringify(message)}\n`);
    if (socket.writableLength > limits.maxBufferedBytes) {
      logger.warn({ remote: socket.remoteAddress, buffered: socket.writableLength }, 'electrum client does not read: disconnected');
      close();
      return false;
    }
    return true;
  };

  const ctx: ElectrumContext = {
    feed,
    settings,
    state: new Map(),
    remoteAddress: socket.remoteAddress ?? 'unknown',
    get closed() {
      return closed;
    },
    async notify(method, params) {
      if (!send({ jsonrpc: '2.0', method, params })) return;
      if (socket.writableLength > limits.maxBufferedBytes / 2) await Promise.race([once(socket, 'drain'), once(socket, 'close')]);
    },
    afterReply: () => undefined,
    onClose(cleanup) {
      if (closed) cleanup();
      else cleanups.push(cleanup);
    },
  };

  const answer = async (id: Id, method: ElectrumMethod, params: unknown[]): Promise<void> => {
    const after: Array<() => void> = [];
    const callCtx: ElectrumContext = Object.create(ctx, {
      afterReply: { value: (work: () => void) => after.push(work) },
    }) as ElectrumContext;
    try {
      const result = await method(callCtx, params);
      if (send({ jsonrpc: '2.0', id, result })) for (const work of after) work();
    } catch (error) {
      if (error instanceof ElectrumError) send({ jsonrpc: '2.0', id, error: { code: error.code, message: error.message } });
      else {
        logger.error({ err: error }, 'electrum method failed');
        send({ jsonrpc: '2.0', id, error: { code: RPC_ERRORS.internal, message: 'internal error' } });
      }
    }
  };

  const handle = (line: string): void => {
    const parsed = parseLine(line);
    if ('error' in parsed) {
      send({ jsonrpc: '2.0', id: parsed.id, error: { code: parsed.error.code, message: parsed.error.message } });
      return;
    }
    const method = methods.get(parsed.method);
    if (method === undefined) {
      send({ jsonrpc: '2.0', id: parsed.id, error: { code: RPC_ERRORS.methodNotFound, message: `unknown method ${parsed.method}` } });
      return;
    }
    if (pending >= limits.maxPending) {
      send({
        jsonrpc: '2.0',
        id: parsed.id,
        error: { code: RPC_ERRORS.limit, message: `more than ${limits.maxPending} requests pending` },
      });
      return;
    }
    pending += 1;
    void answer(parsed.id, method, parsed.params).finally(() => {
      pending -= 1;
    });
  };

  const tooLong = (): void => {
    send({
      jsonrpc: '2.0',
      id: null,
      error: { code: RPC_ERRORS.invalidRequest, message: `request line longer than ${limits.maxLineBytes} bytes` },
    });
    socket.end();
    closed = true;
    for (const cleanup of cleanups.splice(0)) cleanup();
  };

  socket.on('data', (chunk: Buffer) => {
    if (closed) return;
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    let newline: number;
    while (!closed && (newline = buffered.indexOf(0x0a)) !== -1) {
      if (newline > limits.maxLineBytes) return tooLong();
      const line = buffered.subarray(0, newline).toString('utf8').trim();
      buffered = buffered.subarray(newline + 1);
      if (line !== '') handle(line);
    }
    if (buffered.length > limits.maxLineBytes) tooLong();
  });
}
