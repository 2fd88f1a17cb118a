import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createMemoryLogger, ensurePrivateFile, openDatabaseFile } from '../src';
import { asRoot, callAsOtherUser, childUid, folderWithMode, rootFile } from './support/other-user';
import { temporaryFolders } from '../src/testing';

const temporaryDir = temporaryFolders();

describe('ensurePrivateFile', () => {
  it('creates a missing file empty with mode 0600 (its directory 0700), and narrows an existing one to 0600, keeping its content', () => {
    const dir = temporaryDir('private');
    const fresh = join(dir, 'sub', 'events.db');
    expect(ensurePrivateFile(fresh)).toEqual({ exposed: false });
    expect(statSync(fresh).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'sub')).mode & 0o777).toBe(0o700);
    expect(readFileSync(fresh, 'utf8')).toBe('');
    const older = join(dir, 'older.db');
    writeFileSync(older, 'rows');
    chmodSync(older, 0o644);
    ensurePrivateFile(older);
    expect(statSync(older).mode & 0o777).toBe(0o600);
    expect(readFileSync(older, 'utf8')).toBe('rows');
  });

  // Another user's file is left as it is and reported, never thrown: the caller's open says
  // whether it can be used.
  const ensurePrivateFileAsOther = (path: string): unknown => {
    const outcome = callAsOtherUser('ensurePrivateFile', path);
    expect(outcome).not.toHaveProperty('error');
    return (outcome as { value: unknown }).value;
  };

  it('leaves a file it may not open for writing (mode 0444) as it is, reported exposed with its owner, mode and what to do', () => {
    const file = join(folderWithMode(0o777), 'events.db');
    writeFileSync(file, 'rows');
    chmodSync(file, 0o444);
    const owner = statSync(file).uid;
    expect(ensurePrivateFileAsOther(file)).toEqual({
      exposed: true,
      reason: `${file} is readable or writable by other users and this process may not narrow it (EACCES: owned by uid ${owner}, mode 0444): chmod 600 it as its owner`,
    });
    expect(statSync(file).mode & 0o777).toBe(0o444);
    expect(readFileSync(file, 'utf8')).toBe('rows');
  });

  it("leaves another user's writable file (mode 0666) as it is, reported exposed: the process may use it but not narrow it", () => {
    // Not root: /dev/null is root's, mode 0666, and chmod on it is refused (EPERM).
    const file = rootFile(0o666, '/dev/null');
    expect(ensurePrivateFileAsOther(file)).toEqual({
      exposed: true,
      reason: `${file} is readable or writable by other users and this process may not narrow it (EPERM: owned by uid 0, mode 0666): chmod 600 it as its owner`,
    });
    expect(statSync(file).mode & 0o777).toBe(0o666);
  });

  it('a file of another user it may not read is an error naming its owner and mode (SQLite would say only "unable to open database file")', () => {
    // Not root: /etc/shadow is root's, and no one else reads it; it is only opened for appending, which is refused.
    const file = rootFile(0o600, '/etc/shadow');
    const { uid: owner, mode } = statSync(file);
    expect(callAsOtherUser('ensurePrivateFile', file)).toEqual({
      error: `cannot read ${file}: this process (uid ${childUid}) may not read it (owned by uid ${owner}, mode 0${(mode & 0o777).toString(8)})`,
    });
    if (asRoot) expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('a file it may not create, or in a folder it may not reach, names the folder and the uid', () => {
    const closed = folderWithMode(0o555);
    expect(callAsOtherUser('ensurePrivateFile', join(closed, 'events.db'))).toEqual({
      error: `cannot create ${join(closed, 'events.db')}: this process (uid ${childUid}) may not write in ${closed}`,
    });
    expect(readdirSync(closed)).toEqual([]);
    const sealed = folderWithMode(0o700);
    const inside = join(sealed, 'data', 'events.db');
    if (!asRoot) chmodSync(sealed, 0o000);
    try {
      expect(callAsOtherUser('ensurePrivateFile', inside)).toEqual({
        error: `cannot create ${inside}: this process (uid ${childUid}) may not reach ${join(sealed, 'data')}`,
      });
    } finally {
      chmodSync(sealed, 0o700);
    }
  });
});

describe('openDatabaseFile', () => {
  /** Opens `file` with one table `t`, keeping the handle it opened (to see it closed after a failure). */
  const open = (file: string, setup: (db: Database.Database) => void = (db) => db.exec('CREATE TABLE IF NOT EXISTS t (a)')) => {
    const opened: Database.Database[] = [];
    const { logger, lines } = createMemoryLogger();
    const run = () =>
      openDatabaseFile(file, {
        open: (path) => {
          const db = new Database(path);
          opened.push(db);
          return db;
        },
        synchronous: 'FULL',
        setup,
        probeTable: 't',
        logger,
      });
    return { run, opened, lines };
  };

  it('creates a private database in WAL mode with the durability asked, runs the setup and returns the open handle, warning of nothing', () => {
    const file = join(temporaryDir('db'), 'data', 'service.sqlite');
    const { run, lines } = open(file);
    const db = run();
    expect([db.pragma('journal_mode', { simple: true }), db.pragma('synchronous', { simple: true })]).toEqual(['wal', 2]); // 2: FULL
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    db.prepare('INSERT INTO t VALUES (1)').run();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(`${file}-wal`).mode & 0o777).toBe(0o600);
    db.close();
    expect(lines.filter((line) => line.level >= 40)).toEqual([]);
  });

  it('a file that is not a database, or a setup that fails, is one error naming the file, the handle closed', () => {
    const file = join(temporaryDir('db'), 'service.sqlite');
    writeFileSync(file, 'not a database, but a file of the same name'.repeat(100));
    const garbage = open(file);
    expect(garbage.run).toThrow(`cannot open the SQLite file ${file} (DATA_DIR): file is not a database`);
    expect(garbage.opened.map((db) => db.open)).toEqual([false]);

    const fresh = join(temporaryDir('db'), 'service.sqlite');
    const newer = open(fresh, () => {
      throw new Error('the database is of a newer version (3)');
    });
    expect(newer.run).toThrow(`cannot open the SQLite file ${fresh} (DATA_DIR): the database is of a newer version (3)`);
    expect(newer.opened.map((db) => db.open)).toEqual([false]);
  });

  it('names the file as the caller calls it', () => {
    const file = join(temporaryDir('db'), 'events.db');
    writeFileSync(file, 'x'.repeat(4096));
    expect(() =>
      openDatabaseFile(file, {
        open: (path) => new Database(path),
        synchronous: 'NORMAL',
        setup: () => undefined,
        probeTable: 't',
        what: 'the event log',
      }),
    ).toThrow(`cannot open the event log ${file} (DATA_DIR): file is not a database`);
  });

  // As root, the child runs as nobody (unprivilegedUser), who may neither write nor chmod root's 0444 file.
  it('a database it may only read is warned about (readable by others, not narrowed), then stops the open saying what to do', () => {
    const dir = folderWithMode(0o777);
    const file = join(dir, 'service.sqlite');
    open(file).run().close();
    chmodSync(file, 0o444);
    const { uid: owner } = statSync(file);
    expect(callAsOtherUser('openDatabaseFile', file)).toEqual({
      value: {
        warnings: [
          `${file} is readable or writable by other users and this process may not narrow it (EACCES: owned by uid ${owner}, mode 0444): chmod 600 it as its owner`,
        ],
        error: `cannot open the SQLite file ${file} (DATA_DIR): it can be read but not written by this process (uid ${childUid}): make the file, its -wal and -shm files and DATA_DIR writable`,
      },
    });
  });
});
