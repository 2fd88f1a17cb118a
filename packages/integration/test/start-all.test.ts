import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { promtoolCheck } from '@repo/metrics/testing';
import { temporaryFolders } from '@repo/service/testing';
import { eventually, ROOT } from './support/processes';

// `pnpm start` runs this launcher after the build (issue 8). Ports are shifted below the
// ephemeral range the other suites draw from, and state goes to a temporary folder.
const OFFSET = 10_000 + Math.floor(Math.random() * 4_000);
const SERVICES = ['config-server', 'storage', 'rpc-proxy', 'relay', 'silent-payments'];
const temporaryDir = temporaryFolders();

/** GET over the config server's TLS (trusting its generated certificate): status and body. */
function httpsGet(port: number, path: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    request({ host: '127.0.0.1', port, path, ca, servername: 'localhost' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => done({ status: res.statusCode ?? 0, body }));
    })
      .on('error', fail)
      .end();
  });
}

/** A plain-HTTP service's Prometheus text, asked for as Prometheus asks (`Accept: text/plain`). */
async function prometheusText(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { Accept: 'text/plain;version=0.0.4' } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  return response.text();
}

describe('pnpm start (scripts/start-all.mjs)', () => {
  it('starts the five services, says where each listens, and stops them all on Ctrl-C', async () => {
    const dataRoot = temporaryDir('start-all');
    const launcher = spawn(process.execPath, [join(ROOT, 'scripts', 'start-all.mjs')], {
      env: { PATH: process.env.PATH ?? '', START_ALL_PORT_OFFSET: String(OFFSET), START_ALL_DATA_ROOT: dataRoot },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    launcher.stdout.on('data', (c: Buffer) => (output += c.toString()));
    launcher.stderr.on('data', (c: Buffer) => (output += c.toString()));
    // 'close', not 'exit': the launcher's last lines may still be in its pipes when it exits
    const exited = new Promise<number | null>((done) => launcher.once('close', (code) => done(code)));
    // The output without colours, one line per log line, prefixed by the service.
    // eslint-disable-next-line no-control-regex -- strips the ANSI colour escapes (ESC [ … m) of the launcher
    const plain = () => output.replace(/\x1b\[[0-9;]*m/g, '');
    try {
      await eventually(
        async () => (SERVICES.every((s) => new RegExp(`^${s} +\\| info .*listening`, 'm').test(plain())) ? true : undefined),
        60_000,
        'five "listening" lines',
      );

      // The banner names every address, on the shifted ports.
      for (const port of [6666, 8081, 18443, 8090, 8091, 8000]) expect(plain()).toContain(`localhost:${port + OFFSET}`);

      const ca = readFileSync(join(dataRoot, 'config-server', 'tls-cert.pem'), 'utf8');
      expect((await httpsGet(6666 + OFFSET, '/health', ca)).status).toBe(200);
      for (const port of [8081, 8091, 8000]) expect((await fetch(`http://127.0.0.1:${port + OFFSET}/health`)).status).toBe(200);
      // Without a node, the proxy still answers, with its clear error.
      const cookie = readFileSync(join(dataRoot, 'rpc-proxy', '.cookie'), 'utf8').trim();
      const rpc = await fetch(`http://127.0.0.1:${18443 + OFFSET}/`, {
        method: 'POST',
        headers: { Authorization: `Basic ${Buffer.from(cookie).toString('base64')}` },
        body: JSON.stringify({ jsonrpc: '1.0', id: 'x', method: 'getblockcount', params: [] }),
      });
      expect(await rpc.json()).toMatchObject({
        result: null,
        error: { code: -32603, message: expect.stringContaining('node unreachable') },
      });

      // Every service's metrics pass Prometheus's own linter.
      const scrapes: Record<string, string> = {
        'config-server': (await httpsGet(6666 + OFFSET, '/metrics', ca)).body,
        storage: await prometheusText(8081 + OFFSET),
        'rpc-proxy': await prometheusText(18443 + OFFSET),
        relay: await prometheusText(8091 + OFFSET),
        'silent-payments': await prometheusText(8000 + OFFSET),
      };
      for (const [service, text] of Object.entries(scrapes)) {
        expect({ service, ...promtoolCheck(text) }).toEqual({ service, status: 0, problems: [] });
        expect(text).toContain('process_cpu_seconds_total');
      }
    } finally {
      launcher.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    for (const s of SERVICES) expect(plain()).toMatch(new RegExp(`^${s} +\\| exited \\(0\\)$`, 'm'));
  }, 90_000);
});
