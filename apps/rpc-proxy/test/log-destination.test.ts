import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@repo/http';
import { useAsyncLogDestination } from '../src/log-destination';

describe('useAsyncLogDestination', () => {
  it('writes every line of a createLogger logger to the file descriptor, redaction kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rpc-proxy-log-'));
    const file = join(dir, 'out.log');
    const fd = openSync(file, 'w');
    try {
      const logger = createLogger({ name: 'rpc-proxy', level: 'info' });
      const destination = useAsyncLogDestination(logger, fd);
      for (let i = 0; i < 100; i++) logger.info({ n: i, password: 'hunter2' }, 'request');
      // end() writes what is buffered, then closes the descriptor.
      await new Promise<void>((resolve) => {
        destination.once('close', () => resolve());
        destination.end();
      });
      const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { n: number; password: string; service: string });
      expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      expect(lines.every((l) => l.password === '[redacted]' && l.service === 'rpc-proxy')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
