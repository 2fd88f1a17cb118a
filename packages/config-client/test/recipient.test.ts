import { copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConfigClient, formatClientPublicKey, generateClientKey, parseClientPrivateKey, type ClientKeyPair } from '../src';
import { runCli } from '../src/cli';
import { capture, runCliProcess, startTestServer, type TestServer } from './support/helpers';

const CONTENT = 'greeting=hello alice\n';

let server: TestServer;
let url: string;
let ca: string;
let fingerprint: string;
let dir: string;
let devKey: string;
let clientKeysDir: string;

beforeAll(async () => {
  server = await startTestServer();
  ({ url, ca, fingerprint, dir } = server);
  devKey = server.devKey;
  clientKeysDir = server.clientKeysDir;
});

afterAll(async () => {
  await server.close();
});

function register(env: string, name: string, key: ClientKeyPair): void {
  mkdirSync(join(clientKeysDir, env), { recursive: true });
  writeFileSync(join(clientKeysDir, env, `${name}.pub`), `${formatClientPublicKey(key)}\n`);
}

describe('fetchFileWithPrivateKey', () => {
  it.each([
    ['X25519', 'node', 'hpke-x25519'],
    ['X-Wing', 'noble', 'hpke-xwing'],
  ] as const)('fetches and opens a file sealed to a registered %s key (%s backend)', async (kem, backend, mode) => {
    const key = generateClientKey(kem);
    register('dev', `lib-${kem}`, key);
    const file = await createConfigClient({ baseUrl: url, ca, backend }).fetchFileWithPrivateKey('dev', 'app.conf', key);
    expect(new TextDecoder().decode(file.content)).toBe(CONTENT);
    expect(file.headers['x-encryption-mode']).toBe(mode);
  });

  it('reports an unregistered key as HTTP_ERROR 403 ACCESS_DENIED', async () => {
    const key = generateClientKey('X-Wing');
    await expect(createConfigClient({ baseUrl: url, ca }).fetchFileWithPrivateKey('dev', 'app.conf', key)).rejects.toMatchObject({
      code: 'HTTP_ERROR',
      status: 403,
      serverError: { code: 'ACCESS_DENIED' },
    });
  });

  it('reports DECRYPT_FAILED when the private key does not match the registered public key', async () => {
    const key = generateClientKey('X25519');
    register('dev', 'mismatch', key);
    const other = generateClientKey('X25519');
    await expect(
      createConfigClient({ baseUrl: url, ca }).fetchFileWithPrivateKey('dev', 'app.conf', { ...other, publicKey: key.publicKey }),
    ).rejects.toMatchObject({ code: 'DECRYPT_FAILED' });
  });
});

describe('config-client keygen and get --private-key, over TLS', () => {
  it.each([
    ['x25519', 'X25519', 32],
    ['xwing', 'X-Wing', 1216],
  ] as const)('generates a %s key pair, registers it, and fetches the file with it (real CLI process)', async (flag, kem, publicLength) => {
    const keyFile = join(dir, `cli-${flag}.key`);
    const gen = await runCliProcess(['keygen', '--kem', flag, '--out', keyFile]);
    expect(gen.code).toBe(0);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const printed = gen.stdout.trim();
    expect(Buffer.from(printed, 'base64').length).toBe(publicLength);
    expect(readFileSync(`${keyFile}.pub`, 'utf8').trim()).toBe(printed);
    expect(gen.stderr).toContain('register the public key');
    expect(parseClientPrivateKey(readFileSync(keyFile, 'utf8')).kem).toBe(kem);

    // Before registration the server refuses; after the operator copies the .pub file, it serves.
    const refused = await runCliProcess(['get', 'dev/app.conf', '--private-key', keyFile], {
      CONFIG_SERVER_URL: url,
      CONFIG_FINGERPRINT: fingerprint,
    });
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toContain('server answered 403: access not authorized (ACCESS_DENIED)');

    mkdirSync(join(clientKeysDir, 'dev'), { recursive: true });
    copyFileSync(`${keyFile}.pub`, join(clientKeysDir, 'dev', `cli-${flag}.pub`));
    const got = await runCliProcess(['get', 'dev/app.conf', '--private-key', keyFile, '--ca', join(dir, 'ca.pem'), '--url', url]);
    expect(got).toEqual({ code: 0, stdout: CONTENT, stderr: '' });
  });

  it('fetches in pre-shared-key mode next to it, unchanged', async () => {
    const out = capture();
    expect(await runCli(['get', 'dev/app.conf', '--url', url, '--key', devKey, '--fingerprint', fingerprint], {}, out.stream)).toBe(0);
    expect(out.text()).toBe(CONTENT);
  });

  it('takes the private key file from CONFIG_PRIVATE_KEY_FILE', async () => {
    const keyFile = join(dir, 'env-var.key');
    expect(await runCli(['keygen', '--kem', 'X-Wing', '--out', keyFile], {}, capture().stream)).toBe(0);
    copyFileSync(`${keyFile}.pub`, join(clientKeysDir, 'dev', 'env-var.pub'));
    const out = capture();
    const code = await runCli(
      ['get', 'dev/app.conf'],
      { CONFIG_SERVER_URL: url, CONFIG_FINGERPRINT: fingerprint, CONFIG_PRIVATE_KEY_FILE: keyFile },
      out.stream,
    );
    expect(code).toBe(0);
    expect(out.text()).toBe(CONTENT);
  });

  it('refuses to overwrite a key without --force, and exits 2 on a bad --kem', async () => {
    const keyFile = join(dir, 'twice.key');
    expect(await runCli(['keygen', '--kem', 'x25519', '--out', keyFile], {}, capture().stream)).toBe(0);
    const first = readFileSync(keyFile, 'utf8');
    expect(await runCli(['keygen', '--kem', 'x25519', '--out', keyFile], {}, capture().stream)).toBe(1);
    expect(readFileSync(keyFile, 'utf8')).toBe(first);
    expect(await runCli(['keygen', '--kem', 'x25519', '--out', keyFile, '--force'], {}, capture().stream)).toBe(0);
    expect(readFileSync(keyFile, 'utf8')).not.toBe(first);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(await runCli(['keygen', '--kem', 'rsa', '--out', join(dir, 'rsa.key')], {}, capture().stream)).toBe(2);
  });

  it('exits 1 with a clear message for a malformed private key file, and 2 for --key with --private-key', async () => {
    const bad = join(dir, 'bad.key');
    writeFileSync(bad, 'X25519 not-base64!\n', { mode: 0o600 });
    const res = await runCliProcess(['get', 'dev/app.conf', '--private-key', bad, '--url', url, '--fingerprint', fingerprint]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('private key file: the key is not standard base64');
    expect(await runCli(['get', 'dev/app.conf', '--private-key', bad, '--key', '00'.repeat(32)], {}, capture().stream)).toBe(2);
  });
});
