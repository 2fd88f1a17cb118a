import { spawn } from 'node:child_process';
import { join } from 'node:path';

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
    // Four long pbkdf2 jobs hold libuv's four threads, so the asynchronous write of "shutting
    // down" waits; the stop takes 50 ms, long enough for that line to be handed to it.
    const script = `
      const h = require(${JSON.stringify(DIST)});
      const logger = h.createLogger({ name: 'probe' });
      h.onShutdownSignal({ logger, stop: () => new Promise((r) => setTimeout(r, 50)) });
      logger.info('started');
      setTimeout(() => {
        for (let i = 0; i < 4; i++) require('node:crypto').pbkdf2('p', 's', 2e6, 32, 'sha256', () => {});
        process.stderr.write('busy\\n');
      }, 100);
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const closed = new Promise((r) => child.stdout.once('close', r));
    await new Promise<void>((done, fail) => {
      child.stderr.once('data', () => done());
      child.once('exit', (code) => fail(new Error(`the probe exited (${code}) before its thread pool was busy`)));
    });
    const exited = exitOf(child);
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const result = await exited;
    await closed;
    clearTimeout(timer);
    expect(result).toEqual({ code: 0, signal: null });
    const messages = out
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(messages).toEqual(['started', 'shutting down', 'stopped']);
  }, 20_000);
});

describe('runMain', () => {
  it('writes its fatal line after the lines logged before it while the thread pool is busy', async () => {
    // The service's own logger hands "starting" to an asynchronous write that waits for the pool,
    // then gathers "opening" and the start fails at once: "opening" must not be written ahead of
    // "starting" at exit, and the fatal line (another logger) comes last.
    const script = `
      const h = require(${JSON.stringify(DIST)});
      h.runMain('probe', async () => {
        const logger = h.createLogger({ name: 'probe' });
        logger.info('starting');
        for (let i = 0; i < 4; i++) require('node:crypto').pbkdf2('p', 's', 2e6, 32, 'sha256', () => {});
        await new Promise((r) => setTimeout(r, 50));
        logger.info('opening');
        throw new Error('listen EADDRINUSE');
      });
    `;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const closed = new Promise((r) => child.stdout.once('close', r));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const result = await exitOf(child);
    await closed;
    clearTimeout(timer);
    expect(result).toEqual({ code: 1, signal: null });
    const lines = out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string; reason?: string });
    expect(lines.map((l) => l.msg)).toEqual(['starting', 'opening', 'failed to start']);
    expect(lines[2]!.reason).toBe('listen EADDRINUSE');
  }, 20_000);
});
