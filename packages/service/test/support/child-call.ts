/**
 * Run by {@link callAsOtherUser} in a child process (as another user): calls one function of
 * ../../src named by argv[2] with the JSON arguments of argv[3], and prints `{ value }` or
 * `{ error }` (the message) as JSON on stdout.
 */
import Database from 'better-sqlite3';
import { createMemoryLogger, ensurePrivateFile, openDatabaseFile, readOrCreateSecretFile, writeSecretFile } from '../../src';

const CALLS: Record<string, (...args: string[]) => unknown> = {
  ensurePrivateFile: (path) => ensurePrivateFile(path),
  writeSecretFile: (path, content) => writeSecretFile(path, content),
  readOrCreateSecretFile: (path) => readOrCreateSecretFile(path, () => 'created').value,
  /** Opens a database with one table `t`: what it warned (the messages logged), and its error if it failed. */
  openDatabaseFile(path) {
    const { logger, lines } = createMemoryLogger();
    const warnings = () => lines.filter((line) => line.level === 40).map((line) => line.msg);
    try {
      openDatabaseFile(path, {
        open: (file) => new Database(file),
        synchronous: 'NORMAL',
        setup: (opened) => opened.exec('CREATE TABLE IF NOT EXISTS t (a)'),
        probeTable: 't',
        logger,
      }).close();
    } catch (err) {
      return { warnings: warnings(), error: (err as Error).message };
    }
    return { warnings: warnings() };
  },
};

let outcome: { value: unknown } | { error: string };
try {
  outcome = { value: CALLS[process.argv[2]!]!(...(JSON.parse(process.argv[3]!) as string[])) };
} catch (err) {
  outcome = { error: (err as Error).message };
}
process.stdout.write(JSON.stringify(outcome));
