import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bytesToHex, generateKey, hexToBytes } from '@repo/crypto';
import { type ConfigClientError, createConfigClient } from '../src';
import { runCli } from '../src/cli';
import { capture, runCliProcess, startTestServer, type TestServer } from './support/helpers';

let server: TestServer;
let url: string;
let ca: string;
let fingerprint: string;
let dir: string;
let devKey: string;

beforeAll(async () => {
  server = await startTestServer();
  ({ url, ca, fingerprint, dir } = server);
  devKey = server.devKey;
});

afterAll(async () => {
  await server.close();
});

describe('createConfigClient', () => {
  it.each(['node', 'noble'] as const)('fetches and opens a file with the %s backend, trusting the CA', async (backend) => {
    const client = createConfigClient({ baseUrl: url, ca, backend });
    const file = await client.fetchFile('dev', 'app.conf', devKey);
    expect(new TextDecoder().decode(file.content)).toBe('greeting=hello alice\n');
    expect(file.fileName).toBe('app.conf');
  });

  it('fetches with a pinned fingerprint and no CA', async () => {
    const client = createConfigClient({ baseUrl: url, fingerprint: fingerprint.replace(/:/g, '').toLowerCase() });
    const file = await client.fetchFile('dev', 'app.conf', hexToBytes(devKey));
    expect(new TextDecoder().decode(file.content)).toBe('greeting=hello alice\n');
  });

  it('refuses a certificate that matches neither CA nor pin', async () => {
    await expect(createConfigClient({ baseUrl: url }).fetchFile('dev', 'app.conf', devKey)).rejects.toMatchObject({
      code: 'TLS_UNTRUSTED',
    });
    await expect(
      createConfigClient({ baseUrl: url, fingerprint: 'AB'.repeat(32) }).fetchFile('dev', 'app.conf', devKey),
    ).rejects.toMatchObject({
      code: 'TLS_UNTRUSTED',
    });
  });

  it('reports a wrong key as DECRYPT_FAILED', async () => {
    const client = createConfigClient({ baseUrl: url, ca });
    await expect(client.fetchFile('dev', 'app.conf', generateKey())).rejects.toMatchObject({ code: 'DECRYPT_FAILED' });
  });

  it('reports the server error record', async () => {
    const client = createConfigClient({ baseUrl: url, ca });
    const err: ConfigClientError = await client.fetchFile('dev', 'missing.conf', devKey).then(
      () => {
        throw new Error('unreachable');
      },
      (e: ConfigClientError) => e,
    );
    expect(err).toMatchObject({ code: 'HTTP_ERROR', status: 404, serverError: { error: 'file not found: dev/missing.conf' } });
  });

  it('refuses plain http and a malformed key', async () => {
    await expect(createConfigClient({ baseUrl: url.replace('https', 'http'), ca }).fetchSealed('dev', 'app.conf')).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(createConfigClient({ baseUrl: url, ca }).fetchFile('dev', 'app.conf', 'abc')).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});

describe('config-client CLI', () => {
  it('writes the plaintext to stdout', async () => {
    const out = capture();
    const code = await runCli(['get', 'dev/app.conf', '--url', url, '--key', devKey, '--ca', join(dir, 'ca.pem')], {}, out.stream);
    expect(code).toBe(0);
    expect(out.text()).toBe('greeting=hello alice\n');
  });

  it('writes nothing and exits 1 with a wrong key', async () => {
    const out = capture();
    const code = await runCli(
      ['get', 'dev/app.conf', '--url', url, '--key', bytesToHex(generateKey()), '--fingerprint', fingerprint],
      {},
      out.stream,
    );
    expect(code).toBe(1);
    expect(out.text()).toBe('');
  });

  it('exits 2 on a usage error', async () => {
    expect(await runCli(['fetch'], {}, capture().stream)).toBe(2);
    expect(await runCli(['get', 'dev/app.conf', '--url', url, '--ca', join(dir, 'ca.pem')], {}, capture().stream)).toBe(2);
  });

  it('round-trips through the real CLI process, with the key file and --out', async () => {
    const keyFile = join(dir, 'dev.key');
    writeFileSync(keyFile, `${devKey}\n`, { mode: 0o600 });
    const outFile = join(dir, 'app.conf');
    const result = await runCliProcess(['get', 'dev/app.conf', '--out', outFile], {
      CONFIG_SERVER_URL: url,
      CONFIG_KEY_FILE: keyFile,
      CONFIG_FINGERPRINT: fingerprint,
    });
    expect(result).toMatchObject({ code: 0, stderr: '', stdout: '' });
    expect(readFileSync(outFile, 'utf8')).toBe('greeting=hello alice\n');
    expect(statSync(outFile).mode & 0o777).toBe(0o600);
  });
});
