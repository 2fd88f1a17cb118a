import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { Writable } from 'node:stream';

/** The built CLI, as users run it. */
export const CLI = resolve(__dirname, '..', '..', 'dist', 'cli.js');

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

/** A config server over real TLS on a free port, serving `dev/app.conf` = `greeting=${GREETING}`. */
export interface TestServer {
  service: import('@repo/config-server').ConfigServerApp;
  url: string;
  /** The server's self-signed certificate (PEM), also written to `<dir>/ca.pem`. */
  ca: string;
  fingerprint: string;
  dir: string;
  /** Where client public keys are registered (`<env>/<name>.pub`), re-read on every request. */
  clientKeysDir: string;
  /** The `dev` environment key, in hex. */
  devKey: string;
  /** Closes the server, then removes its folder. */
  close(): Promise<void>;
}

/** Starts the config server for the client tests (`overrides` on top of its configuration); close it with `server.close()`. */
export async function startTestServer(overrides: Record<string, string> = {}): Promise<TestServer> {
  const { mkdirSync, mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { bytesToHex, deriveKey, generateKey } = await import('@repo/crypto');
  const { createApp, createKeyring, environmentKeyInfo, loadConfig } = await import('@repo/config-server');
  const { certificateFingerprint, createSilentLogger, generateSelfSignedCertificate, listen } = await import('@repo/service');

  const dir = mkdtempSync(join(tmpdir(), 'config-client-'));
  const storage = join(dir, 'storage');
  mkdirSync(join(storage, 'dev'), { recursive: true });
  writeFileSync(join(storage, 'dev', '.env'), 'USER=alice\nGREETING=hello $USER\n');
  writeFileSync(join(storage, 'dev', 'app.conf'), 'greeting=${GREETING}\n');
  const tls = await generateSelfSignedCertificate(['localhost', '127.0.0.1']);
  writeFileSync(join(dir, 'ca.pem'), tls.cert);
  const master = generateKey();
  const clientKeysDir = join(dir, 'client-keys');
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: join(dir, 'data'),
    STORAGE_DIR: storage,
    CONFIG_MASTER_KEY: bytesToHex(master),
    CLIENT_KEYS_DIR: clientKeysDir,
    CLIENT_KEYS_RECHECK_MS: '0',
    // One server serves a whole test file: a file's requests, CLI runs included, come faster than
    // the default 10 a second from one address (watch.test.ts made its eleventh within a second
    // now and then, and got 429). The limits are the config server's own tests' business.
    RATE_LIMIT_PER_SECOND: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    ...overrides,
  });
  const service = createApp(config, {
    logger: createSilentLogger(),
    keyring: createKeyring({ keysDir: config.keysDir, masterKey: master }),
    tls,
  });
  await service.start();
  const { port } = await listen(service.servers.https, 0, '127.0.0.1');
  return {
    service,
    url: `https://127.0.0.1:${port}`,
    ca: tls.cert,
    fingerprint: certificateFingerprint(tls.cert),
    dir,
    clientKeysDir,
    devKey: bytesToHex(deriveKey(master, environmentKeyInfo('dev'))),
    close: async () => {
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
