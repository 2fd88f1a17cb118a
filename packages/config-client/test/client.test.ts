import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bytesToHex, deriveKey, generateKey, hexToBytes } from '@repo/crypto';
import { createApp, createKeyring, environmentKeyInfo, loadConfig, type ConfigServerApp } from '@repo/config-server';
import { certificateFingerprint, createSilentLogger, generateSelfSignedCertificate, listen } from '@repo/http';
import { ConfigClientError, createConfigClient } from '../src';
import { runCli } from '../src/cli';
import { capture, runCliProcess } from './helpers';

const MASTER = '22'.repeat(32);

let service: ConfigServerApp;
let url: string;
let ca: string;
let fingerprint: string;
let dir: string;
const devKey = bytesToHex(deriveKey(hexToBytes(MASTER), environmentKeyInfo('dev')));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'config-client-'));
  const storage = join(dir, 'storage');
  mkdirSync(join(storage, 'dev'), { recursive: true });
  writeFileSync(join(storage, 'dev', '.env'), 'USER=alice\nGREETING=hello $USER\n');
  writeFileSync(join(storage, 'dev', 'app.conf'), 'greeting=${GREETING}\n');
  const tls = await generateSelfSignedCertificate(['localhost', '127.0.0.1']);
  ca = tls.cert;
  fingerprint = certificateFingerprint(tls.cert);
  writeFileSync(join(dir, 'ca.pem'), ca);
  const config = loadConfig({ PORT: '0', DATA_DIR: join(dir, 'data'), STORAGE_DIR: storage, CONFIG_MASTER_KEY: MASTER });
  service = createApp(config, {
    logger: createSilentLogger(),
    keyring: createKeyring({ keysDir: config.keysDir, masterKey: hexToBytes(MASTER) }),
    tls,
  });
  const { port } = await listen(service.server, 0, '127.0.0.1');
  url = `https://127.0.0.1:${port}`;
});

afterAll(async () => {
  await service.close();
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
