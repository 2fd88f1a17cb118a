import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { join } from 'node:path';
import { temporaryFolders } from '../src/testing';

const temporaryDir = temporaryFolders();

const DIST = join(__dirname, '..', 'dist', 'index.js');

/** A process that logs every 5 ms and stops on signals through onShutdownSignal. */
function startLoggingProcess() {
  const script = `
    const h = require(${JSON.stringify(DIST)});
    const logger = h.createLogger({ name: 'probe' });
    h.onShutdownSignal({ logger, stop: async () => {} });
    setInterval(() => logger.info('tick'), 5);
  `;
  return spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
}

/** Resolves on the child's first output line; rejects at once if it exits first (it failed to start). */
function firstOutput(child: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((done, fail) => {
    child.stdout!.once('data', () => done());
    child.once('exit', (code) => fail(new Error(`the probe exited (${code}) before logging`)));
  });
}

function exitOf(child: ReturnType<typeof spawn>): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((done) => child.once('exit', (code, signal) => done({ code, signal })));
}

/** From now until the child exits and its stdout closes (killed after 15 s): how it ended, its stdout lines parsed. */
async function outcome(
  child: ChildProcess & { stdout: Readable },
): Promise<{ result: { code: number | null; signal: NodeJS.Signals | null }; lines: { msg: string; reason?: string }[] }> {
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const closed = new Promise((r) => child.stdout.once('close', r));
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const result = await exitOf(child);
  await closed;
  clearTimeout(timer);
  const lines = out
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { msg: string; reason?: string });
  return { result, lines };
}

/** A FIFO in a fresh directory: opening it for reading blocks until a writer opens it. */
function makeFifo(): string {
  const path = join(temporaryDir('shutdown'), 'hold');
  execFileSync('mkfifo', [path]);
  return path;
}

/** Child code that blocks libuv's four pool threads opening `fifo` until {@link releasePool}. */
function holdPool(fifo: string): string {
  return `for (let i = 0; i < 4; i++) require('node:fs').open(${JSON.stringify(fifo)}, 'r', (e, fd) => { if (!e) require('node:fs').close(fd, () => {}); })`;
}

/** Opens `fifo` for writing (its readers' opens return) and closes it; nothing when no reader waits. */
function releasePool(fifo: string): void {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // no reader left: the child is gone
  }
}

/** Resolves once the child has written `word` on a line of its stderr. */
function stderrSays(child: ChildProcess & { stderr: Readable }, word: string): Promise<void> {
  return new Promise((done, fail) => {
    let text = '';
    const onData = (d: Buffer) => {
      text += d.toString('utf8');
      if (!text.split('\n').includes(word)) return;
      child.stderr.off('data', onData);
      done();
    };
    child.stderr.on('data', onData);
    child.once('exit', (code) => fail(new Error(`the probe exited (${code}) before writing ${word}`)));
  });
}

describe('onShutdownSignal', () => {
  it('exits 0 on SIGTERM', async () => {
    const child = startLoggingProcess();
    await firstOutput(child);
    const exited = exitOf(child);
    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
  });

  it('still exits on SIGTERM after its log pipe was closed (EPIPE)', async () => {
    const child = startLoggingProcess();
    await firstOutput(child);
    child.stdout.destroy();
    await new Promise((r) => setTimeout(r, 200));
    const exited = exitOf(child);
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    const result = await exited;
    clearTimeout(timer);
    expect(result.signal).not.toBe('SIGKILL');
  });

  it('writes "shutting down" before "stopped" while the thread pool is busy', async () => {
    // The pool held (its four threads blocked opening a FIFO), so the asynchronous write of
    // "shutting down" waits; the stop takes 50 ms, long enough for that line to be handed to it.
    const fifo = makeFifo();
    const script = `
      const h = require(${JSON.stringify(DIST)});
      const logger = h.createLogger({ name: 'probe' });
      h.onShutdownSignal({ logger, stop: () => new Promise((r) => { process.stderr.write('stopping\\n'); setTimeout(r, 50); }) });
      logger.info('started');
      setTimeout(() => { ${holdPool(fifo)}; process.stderr.write('held\\n'); }, 100);
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const ended = outcome(child);
    await stderrSays(child, 'held');
    child.kill('SIGTERM');
    await stderrSays(child, 'stopping');
    await new Promise((r) => setTimeout(r, 200)); // "stopped" is logged meanwhile
    releasePool(fifo);
    const { result, lines } = await ended;
    expect(result).toEqual({ code: 0, signal: null });
    expect(lines.map((l) => l.msg)).toEqual(['started', 'shutting down', 'stopped']);
  }, 20_000);
});

describe('runMain', () => {
  it('writes its fatal line after the lines logged before it while the thread pool is busy', async () => {
    // With the pool held, the service's own logger hands "starting" to an asynchronous write that
    // waits, then gathers "opening" and the start fails: "opening" must not be written ahead of
    // "starting" at exit, and the fatal line (another logger) comes last.
    const fifo = makeFifo();
    const script = `
      const h = require(${JSON.stringify(DIST)});
      h.runMain('probe', async () => {
        const logger = h.createLogger({ name: 'probe' });
        ${holdPool(fifo)};
        logger.info('starting');
        await new Promise((r) => setTimeout(r, 50));
        logger.info('opening');
        process.stderr.write('failing\\n');
        throw new Error('listen EADDRINUSE');
      });
    `;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const ended = outcome(child);
    await stderrSays(child, 'failing');
    await new Promise((r) => setTimeout(r, 200));
    releasePool(fifo);
    const { result, lines } = await ended;
    expect(result).toEqual({ code: 1, signal: null });
    expect(lines.map((l) => l.msg)).toEqual(['starting', 'opening', 'failed to start']);
    expect(lines[2]!.reason).toBe('listen EADDRINUSE');
  }, 20_000);
});
