import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryLogger, listen } from '@repo/service';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';

/** A storage tree with one file, an empty DATA_DIR, and an audit log in a folder that does not exist yet. */
function fresh() {
  const root = mkdtempSync(join(tmpdir(), 'config-server-lifecycle-'));
  const storageDir = join(root, 'storage');
  const dataDir = join(root, 'data');
  const auditDir = join(root, 'audit');
  mkdirSync(join(storageDir, 'dev'), { recursive: true });
  writeFileSync(join(storageDir, 'dev', 'app.conf'), 'plain\n');
  mkdirSync(dataDir);
  // No key in the environment and no certificate: the server generates all three on first start.
  const config = loadConfig({ PORT: '0', DATA_DIR: dataDir, STORAGE_DIR: storageDir, AUDIT_LOG_FILE: join(auditDir, 'audit.log') });
  return { root, dataDir, auditDir, config };
}

function status(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, rejectUnauthorized: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    })
      .on('error', reject)
      .end();
  });
}

// docs/config-server.md, "Keys": createApp only builds; the files of a first start are written by start().
describe('config server lifecycle', () => {
  it('writes nothing in createApp, its keys, certificate and audit log in start(), and closes twice', async () => {
    const { root, dataDir, auditDir, config } = fresh();
    const { logger, lines } = createMemoryLogger();
    try {
      const service = createApp(config, { logger });
      expect(readdirSync(dataDir)).toEqual([]);
      expect(existsSync(auditDir)).toBe(false);

      await service.start();
      expect(readdirSync(dataDir).sort()).toEqual(['master.key', 'tls-cert.pem', 'tls-key.pem', 'version.key']);
      expect(statSync(join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);
      expect(statSync(join(dataDir, 'version.key')).mode & 0o777).toBe(0o600);
      expect(statSync(join(auditDir, 'audit.log')).mode & 0o777).toBe(0o600);
      expect(lines.filter((l) => /^(master|version) key loaded$/.test(String(l.msg))).map((l) => l.source)).toEqual([
        'generated',
        'generated',
      ]);

      const { port } = await listen(service.servers.https, 0, '127.0.0.1');
      expect(await status(port, '/dev/app.conf')).toBe(200);
      expect(JSON.parse(readFileSync(join(auditDir, 'audit.log'), 'utf8').trim())).toMatchObject({
        env: 'dev',
        file: 'app.conf',
        status: 200,
      });

      await service.close();
      await service.close();
      expect(service.servers.https.listening).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('closes (twice) without having started, leaving DATA_DIR empty', async () => {
    const { root, dataDir, auditDir, config } = fresh();
    try {
      const service = createApp(config, { logger: createMemoryLogger().logger });
      await service.close();
      await service.close();
      expect(readdirSync(dataDir)).toEqual([]);
      expect(existsSync(auditDir)).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('reads the keys written by the first start on the next one', async () => {
    const { root, dataDir, config } = fresh();
    try {
      const first = createApp(config, { logger: createMemoryLogger().logger });
      await first.start();
      await first.close();
      const written = readFileSync(join(dataDir, 'master.key'), 'utf8');
      const { logger, lines } = createMemoryLogger();
      const second = createApp(config, { logger });
      await second.start();
      await second.close();
      expect(readFileSync(join(dataDir, 'master.key'), 'utf8')).toBe(written);
      expect(lines.filter((l) => /^(master|version) key loaded$/.test(String(l.msg))).map((l) => l.source)).toEqual(['file', 'file']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
