import { Writable } from 'node:stream';
import pino from 'pino';

/** A pino logger whose lines are kept, parsed, in `lines`. */
export function captureLogger(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino(stream), lines };
}
