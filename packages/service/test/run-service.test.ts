import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from '../src';
import { temporaryFolders } from '../src/testing';

const temporaryDir = temporaryFolders();

const DIST = join(__dirname, '..', 'dist', 'index.js');

/**
 * A process running a one-server service through runService: `start()` writes a marker file,
 * `close()` appends to it, so the test sees the order of the lifecycle from outside.
 */
function startService(env: Record<string, string>) {
  const script = `
    const { createServer } = require('node:http');
    const { appendFileSync, writeFileSync } = require('node:fs');
    const s = require(${JSON.stringify(DIST)});
    s.runService({
      name: 'probe',
      envFile: '/nonexistent/.env',
      loadConfig: (env) => {
        if (env.PROBE_FAIL === '1') throw new (require(${JSON.stringify(require.resolve('@repo/config'))}).ConfigError)('PROBE_PORT must be a port');
        return { logLevel: 'info', port: 0, marker: env.PROBE_MARKER };
      },
      createApp: (config) => {
        const server = createServer((_req, res) => res.end('hello'));
        return {
          servers: { http: server },
          async start() { writeFileSync(config.marker, 'started\\n'); },
          async close() { appendFileSync(config.marker, 'closed\\n'); await new Promise((r) => server.close(r)); },
        };
      },
      listen: (config) => ({ http: { port: config.port, host: '127.0.0.1' } }),
    });
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const lines: Record<string, unknown>[] = [];
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const part of parts) if (part.trim() !== '') lines.push(JSON.parse(part) as Record<string, unknown>);
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, lines, exited };
}

async function waitFor<T>(probe: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('runService', () => {
  it('starts the app, listens its servers, logs the address, and closes it once on SIGTERM', async () => {
    const marker = join(temporaryDir('run-service'), 'marker');
    const service = startService({ PROBE_MARKER: marker });
    const listening = await waitFor(() => service.lines.find((l) => l.msg === 'probe listening'));
    expect(listening).toMatchObject({ server: 'http', host: '127.0.0.1' });
    expect(readFileSync(marker, 'utf8')).toBe('started\n');
    const res = await fetch(`http://127.0.0.1:${String(listening.port)}/`);
    expect(await res.text()).toBe('hello');
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(readFileSync(marker, 'utf8')).toBe('started\nclosed\n');
  });

  it('turns a configuration error into one fatal line and exit status 1', async () => {
    const marker = join(temporaryDir('run-service'), 'marker');
    writeFileSync(marker, '');
    const service = startService({ PROBE_MARKER: marker, PROBE_FAIL: '1' });
    expect(await service.exited).toBe(1);
    expect(service.lines).toEqual([expect.objectContaining({ level: 60, msg: 'configuration error: PROBE_PORT must be a port' })]);
    expect(readFileSync(marker, 'utf8')).toBe('');
  });
});

describe('once', () => {
  it('runs the function once and hands every caller the same promise', async () => {
    let runs = 0;
    const close = once(async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 10));
    });
    const first = close();
    expect(close()).toBe(first);
    await first;
    await close();
    expect(runs).toBe(1);
  });
});
