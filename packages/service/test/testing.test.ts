import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startService, temporaryFolders, unreachableByNobody } from '../src/testing';

// startService: the apps' and the integration suite's way to run a built service as operators do.
const folder = temporaryFolders();

/** An app folder whose dist/main.js is `source`. */
function app(source: string): string {
  const dir = folder('fake-app');
  mkdirSync(join(dir, 'dist'));
  writeFileSync(join(dir, 'dist', 'main.js'), source);
  return dir;
}

/** A service that says it listens (with what it was given), then waits for SIGTERM (its handler set before: a test stops it as soon as it reads the line). */
const LISTENS = `
const log = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
process.on('SIGTERM', () => { log({ msg: 'stopped' }); process.exit(0); });
log({ msg: 'fake listening', port: 1234, args: process.execArgv, dataDir: process.env.DATA_DIR, extra: process.env.EXTRA, home: process.env.HOME ?? null });
setInterval(() => {}, 1000);
`;

describe('startService', () => {
  it('starts dist/main.js with its options and environment, and stops it', async () => {
    const service = await startService({
      name: 'fake',
      appDir: app(LISTENS),
      env: { EXTRA: 'x' },
      ready: 'fake listening',
      nodeArgs: ['--max-http-header-size=2048'],
    });
    expect(service.readyLog).toMatchObject({
      port: 1234,
      args: ['--max-http-header-size=2048'],
      dataDir: service.dataDir,
      extra: 'x',
      home: null,
    });
    expect(existsSync(service.dataDir)).toBe(true);
    expect(await service.stop()).toBe(0);
    expect(service.logs.map((l) => l.msg)).toEqual(['fake listening', 'stopped']);
    expect(existsSync(service.dataDir)).toBe(false);
  });

  it('rejects with what a service that exits before its ready line printed', async () => {
    const start = startService({
      name: 'fake',
      appDir: app(`process.stdout.write('{"msg":"cannot start"}\\n'); process.stderr.write('boom'); process.exit(3);`),
      env: {},
      ready: 'fake listening',
    });
    await expect(start).rejects.toThrow(
      /fake exited \(3\) before logging what was expected; last log lines: \{"msg":"cannot start"\}; stderr: boom/,
    );
  });

  it('stops a service that a signal already ended', async () => {
    const service = await startService({ name: 'fake', appDir: app(LISTENS), env: {}, ready: 'fake listening' });
    service.child.kill('SIGKILL');
    await new Promise((r) => service.child.once('exit', r));
    expect(await service.stop()).toBeNull();
    expect(existsSync(service.dataDir)).toBe(false);
  });
});

describe('unreachableByNobody', () => {
  const asRoot = process.getuid?.() === 0;

  it('names the first folder that others may not enter, as root; nothing for a reachable one', () => {
    const open = folder('reachable');
    chmodSync(open, 0o755);
    const closed = folder('closed');
    chmodSync(closed, 0o700);
    const inside = join(closed, 'clone');
    mkdirSync(inside, { mode: 0o755 });
    if (!asRoot) {
      // Not root: the child runs as this user, who can reach whatever this process reaches.
      expect(unreachableByNobody(inside)).toBeUndefined();
      return;
    }
    // tmpdir() itself may be closed to others on some machines: judged only below it then.
    const base = unreachableByNobody(open);
    if (base !== undefined) {
      expect(unreachableByNobody(inside)).toBe(base);
      return;
    }
    expect(unreachableByNobody(inside)).toBe(`nobody (uid 65534) cannot enter ${closed} (mode 700), so cannot load the code below it`);
  });
});
