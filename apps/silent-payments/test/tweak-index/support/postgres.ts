import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, chownSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { freePort } from '@repo/regtest';

/** A PostgreSQL server for the contract suite: TEST_DATABASE_URL's, or a throwaway cluster. */
export interface TestPostgres {
  url: string;
  stop(): Promise<void>;
}

const PG_ROOT = '/usr/lib/postgresql';

function binDir(): string {
  const versions = existsSync(PG_ROOT) ? readdirSync(PG_ROOT).filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'postgres'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined) {
    throw new Error(
      `PostgreSQL is needed for the tweak index's contract suite: set TEST_DATABASE_URL, or install Debian's server (apt-get install -y postgresql; binaries in ${PG_ROOT}/<version>/bin)`,
    );
  }
  return join(PG_ROOT, newest, 'bin');
}

/** Runs a PostgreSQL binary, as the `postgres` user when this process is root (the server refuses root). */
function asOwner(bin: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
}

/** Waits until the server logs that it accepts connections (or exits: the error names its log). */
function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = '';
    const onData = (chunk: Buffer): void => {
      log += chunk.toString();
      if (log.includes('ready to accept connections')) {
        child.stderr?.off('data', onData);
        child.stderr?.resume();
        resolve();
      }
    };
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`postgres exited (${String(code)}) before accepting connections:\n${log}`)));
  });
}

/**
 * A database of its own on TEST_DATABASE_URL's server: suites running at once (turbo runs two
 * packages' suites side by side, and several files of one) never see each other's index.
 * Dropped by `stop()`.
 */
async function databaseOfItsOwn(serverUrl: string): Promise<TestPostgres> {
  const name = `sp_index_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async stop() {
      const dropper = new Client({ connectionString: serverUrl });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/**
 * TEST_DATABASE_URL when set (a fresh database on that server, dropped by `stop()`); otherwise a
 * cluster made by initdb in a temporary folder, on a free loopback port, stopped by its PID
 * (postmaster.pid) by `stop()`.
 */
export async function startTestPostgres(): Promise<TestPostgres> {
  const given = process.env.TEST_DATABASE_URL;
  if (given !== undefined && given !== '') return databaseOfItsOwn(given);
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'sp-index-pg-'));
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) {
    const pw = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (pw.status !== 0) throw new Error('running as root needs the `postgres` user (apt-get install -y postgresql creates it)');
    chownSync(dir, Number(pw.stdout.trim()), Number(gid.stdout.trim()));
    chmodSync(dir, 0o700);
  }
  const [initCmd, initArgs] = asOwner(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const [cmd, args] = asOwner(join(bin, 'postgres'), ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off']);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  await ready(child);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      const exited = new Promise<void>((resolve) => {
        if (child.exitCode !== null) resolve();
        else child.once('exit', () => resolve());
      });
      process.kill(pid, 'SIGINT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
