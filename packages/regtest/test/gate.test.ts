import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bitcoindVersion, findBitcoind, notRunMessage } from '../src/find';

const GATE = join(__dirname, '..', 'bin', 'regtest-gate.js');

/** A fake `bitcoind` that prints `version` for -version (the gate only asks it that). */
function fakeBitcoind(dir: string, version: string): string {
  const path = join(dir, 'bitcoind');
  writeFileSync(path, `#!/bin/sh\necho "Bitcoin Core daemon version v${version}"\n`);
  chmodSync(path, 0o755);
  return path;
}

function gate(env: Record<string, string>, command: string[]) {
  const out = spawnSync(process.execPath, [GATE, ...command], {
    encoding: 'utf8',
    env: { PATH: env.PATH ?? '/nonexistent', npm_package_name: '@repo/example', ...env },
  });
  return { status: out.status, stdout: out.stdout, stderr: out.stderr };
}

/** A fresh temporary folder for every test (fake daemons, their logs). */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gate-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('findBitcoind', () => {
  it('takes BITCOIND first, then bitcoind on PATH, else nothing', () => {
    const path = fakeBitcoind(dir, '29.2.0');
    expect(findBitcoind({ BITCOIND: path, PATH: '/nonexistent' })).toEqual({ path, source: 'env' });
    expect(findBitcoind({ PATH: `/nonexistent:${dir}` })).toEqual({ path, source: 'path' });
    expect(findBitcoind({ PATH: '/nonexistent' })).toBeUndefined();
    expect(findBitcoind({ BITCOIND: '', PATH: '/nonexistent' })).toBeUndefined();
  });

  it('reads a relative BITCOIND from the repository root, wherever the suite runs', () => {
    const cwd = process.cwd();
    try {
      process.chdir(join(__dirname, '..'));
      expect(findBitcoind({ BITCOIND: 'packages/regtest/bin/regtest-gate.js' })).toEqual({
        path: join(__dirname, '..', 'bin', 'regtest-gate.js'),
        source: 'env',
      });
    } finally {
      process.chdir(cwd);
    }
  });

  it('refuses a BITCOIND that is not an executable file', () => {
    expect(() => findBitcoind({ BITCOIND: join(dir, 'missing') })).toThrow(/BITCOIND=.*missing: no executable file there/);
    writeFileSync(join(dir, 'plain'), 'x');
    expect(() => findBitcoind({ BITCOIND: join(dir, 'plain') })).toThrow(/no executable file/);
  });
});

describe('bitcoindVersion', () => {
  it('asks with a data directory of its own, removed afterwards, never the default one', () => {
    // Bitcoin Core rewrites settings.json in its data directory even for -version; the fake
    // records its arguments and whether the data directory it was given exists.
    const path = join(dir, 'bitcoind');
    const log = join(dir, 'args');
    writeFileSync(
      path,
      `#!/bin/sh\necho "$@" > ${log}\nd=\${1#-datadir=}\n[ -d "$d" ] && echo exists >> ${log}\necho "Bitcoin Core daemon version v29.2.0"\n`,
    );
    chmodSync(path, 0o755);
    expect(bitcoindVersion(path)).toBe('29.2.0');
    const [args, exists] = readFileSync(log, 'utf8').trim().split('\n');
    expect(args).toMatch(/^-datadir=\S*bitcoind-version-\S+ -version$/);
    expect(exists).toBe('exists');
    expect(existsSync(args!.split(' ')[0]!.slice('-datadir='.length))).toBe(false);
  });

  it('is undefined when no temporary folder can be made for it (the gate then says so, no stack trace)', () => {
    const path = fakeBitcoind(dir, '29.2.0');
    const r = gate({ BITCOIND: path, PATH: '/usr/bin:/bin', TMPDIR: join(dir, 'missing') }, ['true']);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`@repo/example: ${path} is Bitcoin Core (version unknown), it needs Bitcoin Core 29.x\n`);
  });

  it('is undefined when the file cannot be run or prints no version', () => {
    writeFileSync(join(dir, 'silent'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(dir, 'silent'), 0o755);
    expect(bitcoindVersion(join(dir, 'silent'))).toBeUndefined();
    expect(bitcoindVersion(join(dir, 'missing'))).toBeUndefined();
  });
});

describe('regtest-gate', () => {
  it('prints one line and exits 0 when no bitcoind is found, without running the command', () => {
    const marker = join(dir, 'ran');
    const r = gate({}, ['touch', marker]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${notRunMessage('@repo/example')}\n`);
    expect(r.stdout).toBe(
      '@repo/example: real-node suite not run: it needs Bitcoin Core 29.x; set BITCOIND=/path/to/bitcoind or put bitcoind on PATH\n',
    );
    expect(spawnSync('test', ['-e', marker]).status).toBe(1);
  });

  it('runs the command with BITCOIND set when Bitcoin Core 29 is found, and passes its exit status on', () => {
    const path = fakeBitcoind(dir, '29.2.0');
    const ok = gate({ PATH: `${dir}:/usr/bin:/bin` }, ['sh', '-c', 'echo "$BITCOIND"']);
    expect(ok).toMatchObject({ status: 0, stdout: `${path}\n` });
    const failed = gate({ BITCOIND: path, PATH: '/usr/bin:/bin' }, ['sh', '-c', 'exit 3']);
    expect(failed.status).toBe(3);
  });

  it('fails when BITCOIND names no executable or another major version; skips another version found on PATH', () => {
    const missing = gate({ BITCOIND: join(dir, 'missing'), PATH: '/usr/bin:/bin' }, ['true']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('no executable file there');
    const path = fakeBitcoind(dir, '27.0.0');
    const wrong = gate({ BITCOIND: path, PATH: '/usr/bin:/bin' }, ['true']);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain('is Bitcoin Core 27.0.0, it needs Bitcoin Core 29.x');
    const onPath = gate({ PATH: `${dir}:/usr/bin:/bin` }, ['sh', '-c', 'exit 5']);
    expect(onPath.status).toBe(0);
    expect(onPath.stdout).toContain('real-node suite not run: ');
    expect(onPath.stdout).toContain('is Bitcoin Core 27.0.0, it needs Bitcoin Core 29.x');
  });
});
