import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConfigClient, parseKeyValueLines, type ConfigClient } from '../src';
import { CLI, runCliProcess, startTestServer, type TestServer } from './support/helpers';

let server: TestServer;
let client: ConfigClient;
let envFile: string;

beforeAll(async () => {
  server = await startTestServer({ FILE_CACHE_MS: '0' }); // every fetch sees the latest edit
  client = createConfigClient({ baseUrl: server.url, ca: server.ca });
  envFile = join(server.dir, 'storage', 'dev', '.env');
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  writeFileSync(envFile, 'USER=alice\nGREETING=hello $USER\n');
});

const text = (content: Uint8Array) => new TextDecoder().decode(content);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => T | undefined | false, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** Starts the built CLI as a long-running process (watch, run), with only PATH and `env` set. */
function spawnCli(
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stderr: () => stderr, exited };
}

describe('library: versions, conditional fetch and wait', () => {
  it('returns the version with the file, undefined for an unchanged version, the new file after a change', async () => {
    const first = await client.fetchFile('dev', 'app.conf', server.devKey);
    expect(first.version).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(await client.fetchIfChanged('dev', 'app.conf', server.devKey, { since: first.version })).toBeUndefined();
    const waiting = client.fetchIfChanged('dev', 'app.conf', server.devKey, { since: first.version, waitSeconds: 20 });
    await until('the request to wait', () => server.service.watch.stats.waiting === 1);
    const changedAt = Date.now();
    writeFileSync(envFile, 'USER=bob\nGREETING=hello $USER\n');
    const next = await waiting;
    expect(Date.now()).toBeGreaterThanOrEqual(changedAt);
    expect(text(next!.content)).toBe('greeting=hello bob\n');
    expect(next!.version).not.toBe(first.version);

    const pinned = await client.fetchFile('dev', 'app.conf', server.devKey, { version: first.version });
    expect(text(pinned.content)).toBe('greeting=hello alice\n');
    expect(pinned.version).toBe(first.version);
  });

  it('watchFile yields the current file, then each change', async () => {
    const stop = new AbortController();
    const seen: string[] = [];
    const done = (async () => {
      for await (const file of client.watchFile('dev', 'app.conf', server.devKey, { waitSeconds: 20, signal: stop.signal })) {
        seen.push(text(file.content));
        if (seen.length === 2) stop.abort();
      }
    })();
    await until('the first version', () => seen.length === 1 && server.service.watch.stats.waiting === 1);
    writeFileSync(envFile, 'USER=carol\nGREETING=hi $USER\n');
    await done;
    expect(seen).toEqual(['greeting=hello alice\n', 'greeting=hi carol\n']);
  });

  it('parses KEY=VALUE lines', () => {
    expect(parseKeyValueLines('# c\nA=1\nexport B = "two\\nlines"\nC=\'$literal\'\nnot a pair\n\nD=\n')).toEqual({
      vars: { A: '1', B: 'two\nlines', C: '$literal', D: '' },
      skipped: [5],
    });
  });
});

describe('CLI', () => {
  it('get --version fetches a pinned earlier version', async () => {
    const first = await client.fetchFile('dev', 'app.conf', server.devKey);
    writeFileSync(envFile, 'USER=dave\nGREETING=hello $USER\n');
    const args = ['get', 'dev/app.conf', '--url', server.url, '--key', server.devKey, '--ca', join(server.dir, 'ca.pem')];
    expect((await runCliProcess(args)).stdout).toBe('greeting=hello dave\n');
    const pinned = await runCliProcess([...args, '--version', first.version!]);
    expect(pinned).toMatchObject({ code: 0, stdout: 'greeting=hello alice\n' });
    const unknown = await runCliProcess([...args, '--version', 'AAAAAAAAAAAAAAAAAAAAAA']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('(VERSION_NOT_FOUND)');
  });

  it('get --version takes a version that begins with "-", as one in 64 do (base64url)', async () => {
    const args = ['get', 'dev/app.conf', '--url', server.url, '--key', server.devKey, '--ca', join(server.dir, 'ca.pem')];
    // asked of the server, not refused as an option: no such version here, so 1 and the server's code
    const dashed = await runCliProcess([...args, '--version', '-AAAAAAAAAAAAAAAAAAAAA']);
    expect(dashed).toMatchObject({ code: 1, stdout: '' });
    expect(dashed.stderr).toContain('(VERSION_NOT_FOUND)');
    // a value that is no version is still an option's business: --version without its value
    const missing = await runCliProcess([...args, '--version', '--url', server.url]);
    expect(missing.code).toBe(2);
  });

  it('watch keeps --out current, rewriting it atomically with mode 0600, and exits 0 on SIGTERM', async () => {
    const out = join(server.dir, 'watched.conf');
    const cli = spawnCli([
      'watch',
      'dev/app.conf',
      '--out',
      out,
      '--url',
      server.url,
      '--key',
      server.devKey,
      '--ca',
      join(server.dir, 'ca.pem'),
      '--wait',
      '20',
    ]);
    try {
      await until('the first write', () => existsSync(out) && readFileSync(out, 'utf8') === 'greeting=hello alice\n');
      expect(statSync(out).mode & 0o777).toBe(0o600);
      const inode = statSync(out).ino;
      await until('the watch to wait', () => server.service.watch.stats.waiting === 1);
      writeFileSync(envFile, 'USER=erin\nGREETING=hello $USER\n');
      await until('the rewrite', () => readFileSync(out, 'utf8') === 'greeting=hello erin\n');
      expect(statSync(out).ino).not.toBe(inode); // a new file renamed over the old one
      expect(statSync(out).mode & 0o777).toBe(0o600);
      cli.child.kill('SIGTERM');
      expect(await cli.exited).toBe(0);
      expect(cli.stderr()).toMatch(/watched\.conf written \(dev\/app\.conf version [A-Za-z0-9_-]{22}\)/);
    } finally {
      cli.child.kill('SIGKILL');
    }
  });

  it('run exports the file into the command, restarts it on change, passes SIGTERM on and exits with its status', async () => {
    const log = join(server.dir, 'run.log');
    writeFileSync(log, '');
    // The command exits 7 on SIGTERM and logs what it was given: the handler first, so that a
    // logged line means the handler is in place (under load a SIGTERM forwarded between the two
    // once found none and the command died of the signal, 143).
    const script = `process.on('SIGTERM', () => process.exit(7)); require('fs').appendFileSync(process.env.LOG, process.pid + ' ' + process.env.greeting + '\\n'); setInterval(() => {}, 1000);`;
    writeFileSync(join(server.dir, 'storage', 'dev', 'env.conf'), 'greeting=${GREETING}\n# a comment\nMODE="run"\n');
    const cli = spawnCli(
      [
        'run',
        'dev/env.conf',
        '--url',
        server.url,
        '--key',
        server.devKey,
        '--fingerprint',
        server.fingerprint,
        '--wait',
        '20',
        '--',
        process.execPath,
        '-e',
        script,
      ],
      { LOG: log },
    );
    const lines = () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l !== '');
    try {
      await until('the command to start', () => lines().length === 1);
      expect(lines()[0]).toMatch(/^\d+ hello alice$/);
      await until('the run to wait', () => server.service.watch.stats.waiting === 1);
      writeFileSync(envFile, 'USER=frank\nGREETING=hello $USER\n');
      await until('the restart', () => lines().length === 2);
      const [first, second] = lines().map((l) => l.split(' '));
      expect(second!.slice(1).join(' ')).toBe('hello frank');
      expect(second![0]).not.toBe(first![0]); // a new process
      await until('the run to wait again', () => server.service.watch.stats.waiting === 1);
      cli.child.kill('SIGTERM');
      expect(await cli.exited).toBe(7);
      expect(cli.stderr()).toContain('restarting');
    } finally {
      cli.child.kill('SIGKILL');
    }
  });

  it('run exits with the status of a command that ends by itself', async () => {
    const result = await runCliProcess([
      'run',
      'dev/app.conf',
      '--url',
      server.url,
      '--key',
      server.devKey,
      '--ca',
      join(server.dir, 'ca.pem'),
      '--',
      process.execPath,
      '-e',
      'process.exit(process.env.greeting === "hello alice" ? 3 : 4)',
    ]);
    expect(result.code).toBe(3);
  });

  it('rejects usage errors of watch and run with status 2', async () => {
    const base = ['--url', server.url, '--key', server.devKey];
    expect((await runCliProcess(['watch', 'dev/app.conf', ...base])).code).toBe(2); // no --out
    expect((await runCliProcess(['run', 'dev/app.conf', ...base])).code).toBe(2); // no command
    expect((await runCliProcess(['run', 'dev/app.conf', ...base, '--wait', '-1', '--', 'true'])).code).toBe(2);
    expect((await runCliProcess(['watch', 'dev/app.conf', ...base, '--out', 'x', '--version', 'AAAAAAAAAAAAAAAAAAAAAA'])).code).toBe(2);
  });
});
