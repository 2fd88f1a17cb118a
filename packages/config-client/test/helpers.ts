import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { Writable } from 'node:stream';

/** The built CLI, as users run it. */
export const CLI = resolve(__dirname, '..', 'dist', 'cli.js');

/** Runs the real CLI as a child process with only PATH and `env` set. */
export function runCliProcess(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** A writable stream that keeps what is written, for the in-process CLI. */
export function capture(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk);
      cb();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}
