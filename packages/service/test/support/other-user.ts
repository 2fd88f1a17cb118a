import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporaryFolders, unprivilegedUser } from '../../src/testing';

// The folders folderWithMode makes, removed once the tests of the file importing this module are done.
const temporaryDir = temporaryFolders();

// Permissions do not bind root: as root, the function runs in a child as nobody (65534)
// (unprivilegedUser), on files and folders root owns; as anyone else, in a child as that user.
export const asRoot = process.getuid?.() === 0;
/** The uid the child runs as. */
export const childUid = asRoot ? 65_534 : process.getuid?.();

/** Calls one function of ../../src (see child-call.ts) in a child run as {@link unprivilegedUser}: what it returned, or its error's message. */
export function callAsOtherUser(name: string, ...args: string[]): { value: unknown } | { error: string } {
  const child = spawnSync(process.execPath, ['-r', '@repo/ts-register', join(__dirname, 'child-call.ts'), name, JSON.stringify(args)], {
    cwd: join(__dirname, '..', '..'),
    ...unprivilegedUser(),
    env: { PATH: process.env.PATH ?? '' },
    encoding: 'utf8',
  });
  if (child.stderr !== '') throw new Error(`the child of ${name} wrote to stderr: ${child.stderr}`);
  return JSON.parse(child.stdout) as { value: unknown } | { error: string };
}

/** A temporary folder with `mode` (0777: anyone may write in it). */
export function folderWithMode(mode: number): string {
  const dir = temporaryDir('private');
  chmodSync(dir, mode);
  return dir;
}

/**
 * A file of root's with `mode`, for the child to meet: as root a fresh one in an open folder; as
 * anyone else `system`, a file of the system that stands in for it (root's, as closed to others).
 */
export function rootFile(mode: number, system: string): string {
  if (!asRoot) return system;
  const file = join(folderWithMode(0o777), 'events.db');
  writeFileSync(file, 'rows');
  chmodSync(file, mode);
  return file;
}
