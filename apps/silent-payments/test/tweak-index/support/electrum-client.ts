import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';

/** An answer's error as the server sent it. */
export class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A plain Electrum client written from the protocol alone (newline-delimited JSON-RPC 2.0 over
 * TCP or TLS): calls by id, notifications queued by method, waited for as events.
 */
export interface ElectrumTestClient {
  call<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** The next notification of `method` (its params[0]), waiting for it if none is queued. */
  next<T = unknown>(method: string): Promise<T>;
  /** The next notification of `method`, all its params. */
  nextParams(method: string): Promise<unknown[]>;
  /** Notifications of `method` received and not yet taken by `next`/`nextParams`. */
  queued(method: string): number;
  /** Raw lines written as they are (a client that misbehaves). */
  writeRaw(text: string): void;
  /** Every line received that was no answer to a call and no notification (errors with id null). */
  readonly stray: unknown[];
  readonly socket: Socket;
  /** Resolves when the server closes the connection. */
  readonly ended: Promise<void>;
  close(): void;
}

/** Connects to 127.0.0.1:`port` (TLS with `ca` when given). */
export async function connectElectrum(port: number, tls?: { ca: string }): Promise<ElectrumTestClient> {
  const socket: Socket =
    tls === undefined
      ? connectTcp({ host: '127.0.0.1', port })
      : connectTls({ host: '127.0.0.1', port, ca: tls.ca, servername: 'localhost' });
  await new Promise<void>((resolve, reject) => {
    socket.once(tls === undefined ? 'connect' : 'secureConnect', () => resolve());
    socket.once('error', reject);
  });
  let nextId = 1;
  const calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const queued = new Map<string, unknown[]>();
  const waiting = new Map<string, Array<(v: unknown) => void>>();
  const stray: unknown[] = [];
  let rest = '';
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    rest += chunk.toString('utf8');
    let i: number;
    while ((i = rest.indexOf('\n')) !== -1) {
      const message = JSON.parse(rest.slice(0, i)) as {
        id?: number | null;
        result?: unknown;
        error?: { code: number; message: string };
        method?: string;
        params?: unknown[];
      };
      rest = rest.slice(i + 1);
      if (typeof message.id === 'number' && calls.has(message.id)) {
        const call = calls.get(message.id)!;
        calls.delete(message.id);
        if (message.error) call.reject(new RpcFailure(message.error.code, message.error.message));
        else call.resolve(message.result);
      } else if (typeof message.method === 'string') {
        const value = message.params ?? [];
        const waiter = waiting.get(message.method)?.shift();
        if (waiter) waiter(value);
        else queued.set(message.method, [...(queued.get(message.method) ?? []), value]);
      } else stray.push(message);
    }
  });
  const nextParams = (method: string): Promise<unknown[]> => {
    const list = queued.get(method);
    if (list !== undefined && list.length > 0) return Promise.resolve(list.shift() as unknown[]);
    return new Promise<unknown[]>((resolve) => waiting.set(method, [...(waiting.get(method) ?? []), resolve as (v: unknown) => void]));
  };
  return {
    socket,
    stray,
    ended,
    call<T>(method: string, params: unknown[] = []) {
      const id = nextId++;
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return new Promise<T>((resolve, reject) => calls.set(id, { resolve: resolve as (v: unknown) => void, reject }));
    },
    async next<T>(method: string) {
      return (await nextParams(method))[0] as T;
    },
    nextParams,
    queued: (method: string) => queued.get(method)?.length ?? 0,
    writeRaw(text: string) {
      socket.write(text);
    },
    close() {
      socket.destroy();
    },
  };
}
