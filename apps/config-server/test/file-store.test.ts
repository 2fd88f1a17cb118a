import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppError } from '@repo/errors';
import { createSilentLogger } from '@repo/service';
import { createFileStore } from '../src/file-store';

// docs/config-server.md, "Variable substitution": a rendering is reused for FILE_CACHE_MS; requests
// that find it expired at once share one read of the disk.
describe('file store', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'config-server-store-'));
    mkdirSync(join(root, 'dev'));
    writeFileSync(join(root, 'dev', '.env'), 'HOST=db\n');
    writeFileSync(join(root, 'dev', 'app.conf'), 'host=${HOST}\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const store = (cacheMs: number) => createFileStore({ storageDir: root, maxFileBytes: 1 << 20, logger: createSilentLogger(), cacheMs });
  const request = { env: 'dev', file: 'app.conf' };

  it('answers concurrent requests on an expired rendering with one read', async () => {
    const files = await Promise.all(Array.from({ length: 10 }, () => store(1_000).render(request)));
    expect(files[0]!.content.toString()).toBe('host=db\n');
    // Ten stores, ten readings; one store, one reading shared by all ten requests.
    expect(new Set(files).size).toBe(10);
    const one = store(1_000);
    const shared = await Promise.all(Array.from({ length: 10 }, () => one.render(request)));
    expect(new Set(shared).size).toBe(1);
  });

  it('does not share a read with a request that asks for the disk, nor when nothing is cached', async () => {
    const one = store(1_000);
    const first = one.render(request);
    writeFileSync(join(root, 'dev', 'app.conf'), 'host=${HOST} changed\n');
    const fresh = await one.render(request, { fresh: true });
    expect(fresh.content.toString()).toBe('host=db changed\n');
    expect(fresh).not.toBe(await first);
    const uncached = store(0);
    const [a, b] = await Promise.all([uncached.render(request), uncached.render(request)]);
    expect(a).not.toBe(b);
  });

  it('gives every request sharing a failed read its refusal, and reads again afterwards', async () => {
    const one = store(1_000);
    const missing = { env: 'dev', file: 'later.conf' };
    const results = await Promise.allSettled([one.render(missing), one.render(missing)]);
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect(((r as PromiseRejectedResult).reason as AppError).code).toBe('FILE_NOT_FOUND');
    }
    writeFileSync(join(root, 'dev', 'later.conf'), 'now here\n');
    expect((await one.render(missing)).content.toString()).toBe('now here\n');
  });
});
