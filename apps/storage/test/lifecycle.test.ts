import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSilentLogger, listen } from '@repo/service';
import { createApp } from '../src';
import { getJson, randomKey, storeValue, tempDirEachTest, testConfig } from './support/service';

// The lifecycle every app shares: createApp builds (no file written or opened, no connection,
// nothing listening), start() opens the backend and starts the sweeper, close() stops everything
// and may be called at any point, twice.
describe('storage lifecycle', () => {
  const tempDir = tempDirEachTest();

  it('createApp opens nothing and listens on nothing; start() opens the SQLite file; close() twice is fine', async () => {
    const dir = tempDir();
    const app = createApp(testConfig({ DATA_DIR: dir }), { logger: createSilentLogger() });
    try {
      expect(readdirSync(dir)).toEqual([]);
      expect(app.servers.http.listening).toBe(false);

      await app.start();
      expect(existsSync(join(dir, 'storage.sqlite'))).toBe(true);
      expect(app.servers.http.listening).toBe(false);

      const { port } = await listen(app.servers.http, 0, '127.0.0.1');
      const base = `http://127.0.0.1:${port}`;
      expect(await getJson(`${base}/ready`)).toEqual({ status: 200, body: { status: 'ready', backend: 'sqlite' } });
      const key = randomKey();
      await storeValue(`${base}/storage`, key, 'abcd');
      expect((await getJson(`${base}/storage/retrieve/${key}`)).body).toMatchObject({ value: 'abcd' });
    } finally {
      await app.close();
    }
    await expect(app.close()).resolves.toBeUndefined();
    expect(app.servers.http.listening).toBe(false);
  });

  it('close() without start() resolves, twice, and leaves DATA_DIR empty', async () => {
    const dir = tempDir();
    const app = createApp(testConfig({ DATA_DIR: dir }), { logger: createSilentLogger() });
    await expect(app.close()).resolves.toBeUndefined();
    await expect(app.close()).resolves.toBeUndefined();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('connects to Redis in start(), not in createApp: an unreachable one fails start(), then close() is fine', async () => {
    const dir = tempDir();
    const config = testConfig({
      DATA_DIR: dir,
      STORAGE_BACKEND: 'redis',
      REDIS_URL: 'redis://127.0.0.1:1',
      REDIS_CONNECT_TIMEOUT_MS: '300',
    });
    const app = createApp(config, { logger: createSilentLogger() });
    await expect(app.start()).rejects.toThrow(/cannot connect to Redis \(REDIS_URL\)/);
    await app.close();
    await app.close();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a SQLite file that cannot be opened fails start() with the file named, then close() is fine', async () => {
    const dir = tempDir();
    const notADir = join(dir, 'file');
    writeFileSync(notADir, '');
    const app = createApp(testConfig({ DATA_DIR: notADir }), { logger: createSilentLogger() });
    await expect(app.start()).rejects.toThrow(`cannot open the SQLite file ${join(notADir, 'storage.sqlite')} (DATA_DIR)`);
    await app.close();
    await app.close();
  });
});
