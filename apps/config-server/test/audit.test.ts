import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHpkeSuite, nodeBackend, nodeX25519 } from '@repo/crypto';
import { createSilentLogger } from '@repo/service';
import { createAuditLog, type AuditRecord } from '../src/audit';
import { get, registerClientKey, startServer, type Harness } from './support/harness';

let h: Harness;
beforeEach(async () => {
  h = await startServer();
});
afterEach(async () => {
  await h.close();
});

function auditLines(harness: Harness = h): AuditRecord[] {
  const path = harness.config.auditLogFile;
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditRecord);
}

/**
 * The audit line is written when the response ends, which the client may see a moment before: the
 * lines once there are `n` (no deadline: the test's timeout catches a line that never comes).
 */
async function lines(n: number, harness: Harness = h): Promise<AuditRecord[]> {
  while (auditLines(harness).length < n) await new Promise((r) => setTimeout(r, 10));
  return auditLines(harness);
}

describe('audit log', () => {
  it('writes one line for a file served with a pre-shared key', async () => {
    const res = await get(h, '/dev/app.conf');
    const [line] = await lines(1);
    expect(line).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      ip: '127.0.0.1',
      env: 'dev',
      file: 'app.conf',
      version: res.headers['x-config-version'],
      mode: 'psk',
      client: null,
      fingerprint: null,
      status: 200,
    });
    expect(statSync(h.config.auditLogFile).mode & 0o777).toBe(0o600);
    expect(h.config.auditLogFile).toBe(join(h.dataDir, 'audit.log'));
  });

  it('names the registered client key in recipient mode, and never writes a key or the content', async () => {
    const suite = createHpkeSuite('X25519', { x25519: nodeX25519, aead: nodeBackend });
    const pair = suite.kem.generateKeyPair();
    registerClientKey(h, 'dev', 'ci-runner', pair.publicKey);
    const publicB64 = Buffer.from(pair.publicKey).toString('base64');
    const res = await get(h, '/dev/app.conf', { 'X-Client-Kem': 'X25519', 'X-Client-Public-Key': publicB64 });
    expect(res.status).toBe(200);
    const [line] = await lines(1);
    expect(line).toMatchObject({ env: 'dev', file: 'app.conf', mode: 'hpke-x25519', client: 'ci-runner', status: 200 });
    expect(line!.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    const text = readFileSync(h.config.auditLogFile, 'utf8');
    expect(text).not.toContain(publicB64);
    expect(text).not.toContain(Buffer.from(pair.publicKey).toString('hex'));
    expect(text).not.toContain('postgres://');
  });

  it('writes refusals: an unregistered key, a missing file, a traversal, a bad version, the rate limit', async () => {
    const suite = createHpkeSuite('X25519', { x25519: nodeX25519, aead: nodeBackend });
    const stranger = suite.kem.generateKeyPair();
    await get(h, '/dev/app.conf', { 'X-Client-Kem': 'X25519', 'X-Client-Public-Key': Buffer.from(stranger.publicKey).toString('base64') });
    await get(h, '/dev/missing.conf');
    await get(h, '/dev/%2e%2e/prod/app.conf');
    await get(h, '/dev/app.conf?version=AAAAAAAAAAAAAAAAAAAAAA');
    const found = await lines(4);
    expect(found.map((l) => [l.status, l.code, l.env, l.file])).toEqual([
      [403, 'ACCESS_DENIED', 'dev', 'app.conf'],
      [404, 'FILE_NOT_FOUND', 'dev', 'missing.conf'],
      [403, 'ACCESS_DENIED', null, null],
      [404, 'VERSION_NOT_FOUND', 'dev', 'app.conf'],
    ]);
    expect(found[0]).toMatchObject({
      mode: 'hpke-x25519',
      client: null,
      fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/),
      version: null,
    });
    expect(found[2]!.path).toBe('/dev/%2e%2e/prod/app.conf');
    expect(found[3]).toMatchObject({ requested: 'AAAAAAAAAAAAAAAAAAAAAA', version: null });

    const limited = await startServer({ RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_PER_SECOND: '0' });
    try {
      await get(limited, '/dev/plain.txt');
      await get(limited, '/dev/plain.txt');
      const [, refused] = await lines(2, limited);
      expect(refused).toMatchObject({ env: 'dev', file: 'plain.txt', status: 429, code: 'RATE_LIMITED', version: null, mode: 'psk' });
    } finally {
      await limited.close();
    }
  });

  it('writes 304s, waits (with how long they waited) and pinned versions', async () => {
    const first = await get(h, '/dev/plain.txt');
    const v1 = first.headers['x-config-version'] as string;
    await get(h, '/dev/plain.txt', { 'If-None-Match': `"${v1}"` });
    const waiting = get(h, '/dev/plain.txt?wait=20', { 'If-None-Match': `"${v1}"` });
    while (h.service.watch.stats.waiting < 1) await new Promise((r) => setTimeout(r, 10));
    writeFileSync(join(h.storageDir, 'dev', 'plain.txt'), 'v2\n');
    const changed = await waiting;
    await get(h, `/dev/plain.txt?version=${v1}`);
    const found = await lines(4);
    expect(found.map((l) => [l.status, l.version])).toEqual([
      [200, v1],
      [304, v1],
      [200, changed.headers['x-config-version']],
      [200, v1],
    ]);
    expect(found[2]!.waitedMs).toEqual(expect.any(Number));
    expect(found[3]!.requested).toBe(v1);
  });

  it('does not audit /health or /info', async () => {
    await get(h, '/health');
    await get(h, '/info');
    await get(h, '/dev/plain.txt');
    expect((await lines(1)).map((l) => l.file)).toEqual(['plain.txt']);
  });

  it('goes where AUDIT_LOG_FILE says', async () => {
    const elsewhere = await startServer({ AUDIT_LOG_FILE: join(h.dataDir, 'logs', 'config-audit.jsonl') });
    try {
      await get(elsewhere, '/dev/plain.txt');
      expect((await lines(1, elsewhere))[0]).toMatchObject({ file: 'plain.txt', status: 200 });
      expect(existsSync(join(h.dataDir, 'logs', 'config-audit.jsonl'))).toBe(true);
    } finally {
      await elsewhere.close();
    }
  });
});

describe('audit log rotation', () => {
  it('rotates by size, keeping AUDIT_LOG_KEEP files, every line whole', () => {
    const dir = join(h.dataDir, 'rot');
    const log = createAuditLog({ path: join(dir, 'audit.log'), maxBytes: 1024, keep: 2, logger: createSilentLogger() });
    expect(existsSync(dir)).toBe(false); // nothing touched before open()
    log.open();
    const record = (i: number): AuditRecord => ({
      time: new Date(0).toISOString(),
      ip: '127.0.0.1',
      env: 'dev',
      file: `f${i}`,
      version: null,
      mode: 'psk',
      client: null,
      fingerprint: null,
      status: 200,
    });
    for (let i = 0; i < 60; i++) log.write(record(i));
    log.close();
    expect(readdirSync(dir).sort()).toEqual(['audit.log', 'audit.log.1', 'audit.log.2']);
    const all: string[] = [];
    for (const name of ['audit.log.2', 'audit.log.1', 'audit.log']) {
      const text = readFileSync(join(dir, name), 'utf8');
      expect(text.length).toBeLessThanOrEqual(1024);
      all.push(...text.split('\n').filter((l) => l !== ''));
    }
    const files = all.map((l) => (JSON.parse(l) as AuditRecord).file);
    // The newest lines survive, in order; the oldest went with the file dropped.
    expect(files[files.length - 1]).toBe('f59');
    expect(files).toEqual(files.slice().sort((a, b) => Number(a!.slice(1)) - Number(b!.slice(1))));
    expect(files.length).toBeLessThan(60);
  });
});
