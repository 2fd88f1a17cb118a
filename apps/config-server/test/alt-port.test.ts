import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeBackend, openFromBase64 } from '@repo/crypto';
import { loadConfig } from '../src/config';
import { FILES, get, startServer, type Harness } from './support/harness';

/** The part of `@repo/config-client` these tests use. */
interface ConfigClientModule {
  createConfigClient(options: { baseUrl: string; ca: string }): {
    fetchFile(env: string, file: string, key: Uint8Array): Promise<{ content: Uint8Array }>;
  };
}

// The config client's own source: a workspace dependency on it would close a circle in the
// package graph (its tests run against this server), so it is loaded from its folder at run time.
const { createConfigClient } = require(join(__dirname, '..', '..', '..', 'packages', 'config-client', 'src')) as ConfigClientModule;

/** What a child process's global `fetch` got, trusting `caFile` through NODE_EXTRA_CA_CERTS. */
function fetchInChild(url: string, caFile: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const script = `fetch(process.argv[1]).then(async (r) => process.stdout.write(JSON.stringify({ status: r.status, headers: Object.fromEntries(r.headers), body: await r.text() })), (e) => { process.stderr.write(String(e.cause ?? e)); process.exit(1); });`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script, url], {
      env: { PATH: process.env.PATH ?? '', NODE_EXTRA_CA_CERTS: caFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(JSON.parse(out) as { status: number; headers: Record<string, string>; body: string });
      else reject(new Error(`fetch failed (exit ${code}): ${err}`));
    });
  });
}

describe('HTTPS_ALT_PORT', () => {
  it('is unset by default: one listener; a port when set; a clear error when malformed', async () => {
    expect(loadConfig({}).httpsAltPort).toBeUndefined();
    expect(loadConfig({ HTTPS_ALT_PORT: '6443' }).httpsAltPort).toBe(6443);
    expect(() => loadConfig({ HTTPS_ALT_PORT: 'https' })).toThrow('HTTPS_ALT_PORT must be an integer from 0 to 65535');
    const h = await startServer();
    try {
      expect(Object.keys(h.service.servers)).toEqual(['https']);
      expect(h.altPort).toBeUndefined();
    } finally {
      await h.close();
    }
  });

  describe('set', () => {
    let h: Harness;
    let dir: string;
    let caFile: string;
    beforeAll(async () => {
      h = await startServer({ HTTPS_ALT_PORT: '0' });
      dir = mkdtempSync(join(tmpdir(), 'config-alt-'));
      caFile = join(dir, 'server.pem');
      writeFileSync(caFile, h.ca);
    });
    afterAll(async () => {
      await h.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('serves a file to Node’s fetch, with the headers the main port gives', async () => {
      const viaFetch = await fetchInChild(`https://127.0.0.1:${h.altPort}/dev/plain.txt`, caFile);
      expect(viaFetch.status).toBe(200);
      const plain = openFromBase64(h.derivedKey('dev'), viaFetch.body, { backend: nodeBackend });
      expect(new TextDecoder().decode(plain)).toBe(FILES['dev/plain.txt']);
      const viaMain = await get(h, '/dev/plain.txt');
      const perRequest = new Set(['date', 'x-request-id', 'content-length', 'connection', 'keep-alive']);
      const names = (headers: Record<string, unknown>) =>
        Object.keys(headers)
          .filter((n) => !perRequest.has(n))
          .sort();
      expect(names(viaFetch.headers)).toEqual(names(viaMain.headers));
      expect(viaFetch.headers['x-config-version']).toBe(viaMain.headers['x-config-version']);
    });

    it('serves the config client on both ports', async () => {
      for (const port of [h.port, h.altPort]) {
        const client = createConfigClient({ baseUrl: `https://127.0.0.1:${port}`, ca: h.ca });
        const file = await client.fetchFile('dev', 'plain.txt', h.derivedKey('dev'));
        expect(new TextDecoder().decode(file.content)).toBe(FILES['dev/plain.txt']);
      }
    });

    it('answers a protocol refusal as the main port does (the error record, the common headers)', async () => {
      const reply = await fetchInChild(`https://127.0.0.1:${h.altPort}/dev/%zz`, caFile);
      expect(reply.status).toBe(400);
      expect(JSON.parse(reply.body)).toMatchObject({ code: 'INVALID_PARAMETER' });
      expect(reply.headers['api-version']).toBe('1.0.0');
    });

    it('stops listening on close, with the main listener', async () => {
      const other = await startServer({ HTTPS_ALT_PORT: '0' });
      expect(other.service.servers.httpsAlt?.listening).toBe(true);
      await other.close();
      expect(other.service.servers.httpsAlt?.listening).toBe(false);
      expect(other.service.servers.https.listening).toBe(false);
    });
  });
});
