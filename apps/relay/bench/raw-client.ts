/**
 * A minimal WebSocket receiver for the benchmark (RFC 6455): one TCP socket, the opening
 * handshake, then a frame parser that only finds `"seq":<n>` in text frames and answers pings.
 * A full client per connection would make the load generator, not the server, the bottleneck
 * with 1000 clients on two cores; relay and reference are read by the same code.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

const SEQ = Buffer.from('"seq":');

/** Called once per received event with its sequence number and the arrival time (performance.now()). */
export type OnSeq = (seq: number, at: number) => void;

/** An open raw connection; `onSeq` may be replaced between runs. */
export interface RawClient {
  socket: Socket;
  onSeq: OnSeq;
  close(): void;
}

function pongFrame(payload: Buffer): Buffer {
  // Client frames are masked (RFC 6455 5.3); a zero mask keeps the payload as is.
  return Buffer.concat([Buffer.from([0x8a, 0x80 | payload.length, 0, 0, 0, 0]), payload]);
}

/** Opens a raw WebSocket connection to a `ws://` URL. */
export function openRawClient(url: string): Promise<RawClient> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: u.hostname, port: Number(u.port), noDelay: true });
    const client: RawClient = { socket, onSeq: () => undefined, close: () => socket.destroy() };
    let pending: Buffer = Buffer.alloc(0);
    let open = false;
    socket.once('error', reject);
    socket.on('connect', () => {
      socket.write(
        `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    socket.on('data', (chunk: Buffer) => {
      const at = performance.now();
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      if (!open) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!pending.subarray(0, 12).toString().includes(' 101')) {
          reject(new Error(`upgrade refused: ${pending.subarray(0, pending.indexOf('\r\n')).toString()}`));
          socket.destroy();
          return;
        }
        open = true;
        pending = pending.subarray(end + 4);
        socket.off('error', reject);
        socket.on('error', () => undefined);
        resolve(client);
      }
      let offset = 0;
      while (pending.length - offset >= 2) {
        const opcode = pending[offset]! & 0x0f;
        let length = pending[offset + 1]! & 0x7f;
        let header = 2;
        if (length === 126) {
          if (pending.length - offset < 4) break;
          length = pending.readUInt16BE(offset + 2);
          header = 4;
        } else if (length === 127) {
          if (pending.length - offset < 10) break;
          length = Number(pending.readBigUInt64BE(offset + 2));
          header = 10;
        }
        if (pending.length - offset < header + length) break;
        const start = offset + header;
        const end = start + length;
        if (opcode === 0x1) {
          const at2 = pending.indexOf(SEQ, start);
          if (at2 >= 0 && at2 < end) {
            let n = 0;
            for (let i = at2 + SEQ.length; i < end; i++) {
              const c = pending[i]!;
              if (c < 48 || c > 57) break;
              n = n * 10 + (c - 48);
            }
            client.onSeq(n, at);
          }
        } else if (opcode === 0x9) {
          socket.write(pongFrame(pending.subarray(start, end)));
        } else if (opcode === 0x8) {
          socket.end();
        }
        offset = end;
      }
      pending = offset === pending.length ? Buffer.alloc(0) : pending.subarray(offset);
    });
  });
}
