import { dirname } from 'node:path';

/** The errors of a file operation the process is not allowed (permissions, a read-only mount). */
export function isDenied(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'EACCES' || code === 'EPERM' || code === 'EROFS';
}

/** This process as a permission error names it: `this process (uid N)`. */
export function processName(): string {
  const uid = process.getuid?.();
  return uid === undefined ? 'this process' : `this process (uid ${uid})`;
}

/** A file's owner and mode as a message shows them: `owned by uid 0, mode 0644`. */
export function ownerAndMode(stat: { uid: number; mode: number }): string {
  return `owned by uid ${stat.uid}, mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}`;
}

/**
 * A file that could not be created or reached, as an operator reads it: where, and who this
 * process runs as (`reach`: it may not even look into the folder).
 */
export function cannotCreate(path: string, err: unknown, reach = false): Error {
  const folder = dirname(path);
  let where = `${processName()} may not ${reach ? 'reach' : 'write in'} ${folder}`;
  if ((err as NodeJS.ErrnoException).code === 'EROFS') where = `${folder} is on a read-only file system`;
  return new Error(`cannot create ${path}: ${where}`, { cause: err });
}
