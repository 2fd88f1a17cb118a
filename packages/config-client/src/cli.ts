#!/usr/bin/env node
/**
 * config-client get <env>/<file> [options]: fetches a file from the config server, opens it
 * with the environment key (or, in recipient mode, the client's own private key) and writes the
 * plaintext to stdout (or --out). Nothing is written unless the file authenticates, so a wrong
 * key or an altered body never yields garbage.
 *
 * config-client keygen --kem x25519|xwing --out <file>: writes a key pair for the recipient
 * mode, the private key with mode 0600, and prints the public key for the operator to register.
 */
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CLIENT_VERSION, createConfigClient } from './client';
import { formatClientPrivateKey, formatClientPublicKey, generateClientKey, parseClientPrivateKey, parseKemName } from './client-key';
import { ConfigClientError } from './errors';

const USAGE = `config-client ${CLIENT_VERSION}
usage: config-client get <env>/<file> [options]
       config-client keygen --kem x25519|xwing --out <file> [--force]

get:
  --url URL            config server (env CONFIG_SERVER_URL, default https://localhost:6666)
  --key HEX            environment key, 64 hex characters (env CONFIG_KEY)
  --key-file PATH      file holding the key (env CONFIG_KEY_FILE)
  --private-key PATH   recipient mode: your private key file from keygen (env CONFIG_PRIVATE_KEY_FILE);
                       the server seals the file to its public key, which must be registered
  --ca PATH            PEM CA or self-signed server certificate to trust (env CONFIG_CA_FILE)
  --fingerprint SHA256 pin the server certificate's SHA-256 fingerprint (env CONFIG_FINGERPRINT)
  --out PATH           write the file here (mode 0600) instead of stdout
  --backend node|noble cryptography implementation (default node)

keygen:
  --kem x25519|xwing   X25519, or X-Wing (ML-KEM-768 + X25519, post-quantum hybrid)
  --out PATH           private key file (mode 0600); the public key goes to PATH.pub and stdout
  --force              overwrite existing files

exit status: 0 success, 1 failure (message on stderr), 2 usage error`;

function keygen(values: { kem?: string; out?: string; force?: boolean }, stdout: NodeJS.WritableStream): number {
  if (values.kem === undefined || values.out === undefined) {
    console.error(`keygen needs --kem and --out\n\n${USAGE}`);
    return 2;
  }
  let kem;
  try {
    kem = parseKemName(values.kem);
  } catch (err) {
    console.error(`config-client: ${(err as Error).message}`);
    return 2;
  }
  const publicPath = `${values.out}.pub`;
  if (!values.force && (existsSync(values.out) || existsSync(publicPath))) {
    console.error(`config-client: ${existsSync(values.out) ? values.out : publicPath} exists; pass --force to overwrite it`);
    return 1;
  }
  const key = generateClientKey(kem);
  // Created 0600 from the start (and re-chmodded on --force), so the key is never readable by others.
  writeFileSync(values.out, formatClientPrivateKey(key), { mode: 0o600, flag: values.force ? 'w' : 'wx' });
  if (values.force) chmodSync(values.out, 0o600);
  const publicKey = formatClientPublicKey(key);
  writeFileSync(publicPath, `${publicKey}\n`, { mode: 0o644 });
  stdout.write(`${publicKey}\n`);
  console.error(
    `config-client: ${key.kem} key pair written: private key ${values.out} (mode 0600), public key ${publicPath}\n` +
      `register the public key on the server: copy ${publicPath} to KEYS_DIR/clients/<env>/<name>.pub (CLIENT_KEYS_DIR/<env>/<name>.pub)`,
  );
  return 0;
}

/** Runs the CLI; returns the exit status. */
export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  stdout: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        key: { type: 'string' },
        'key-file': { type: 'string' },
        'private-key': { type: 'string' },
        kem: { type: 'string' },
        force: { type: 'boolean' },
        ca: { type: 'string' },
        fingerprint: { type: 'string' },
        out: { type: 'string' },
        backend: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const [command, target] = positionals;
  if (command === 'keygen' && target === undefined) {
    try {
      return keygen(values, stdout);
    } catch (err) {
      console.error(`config-client: cannot write the key: ${(err as Error).message}`);
      return 1;
    }
  }
  const slash = target?.indexOf('/') ?? -1;
  if (command !== 'get' || target === undefined || slash <= 0 || slash === target.length - 1) {
    console.error(USAGE);
    return 2;
  }
  const backend = values.backend ?? 'node';
  if (backend !== 'node' && backend !== 'noble') {
    console.error('--backend must be node or noble');
    return 2;
  }
  const privateKeyFile = values['private-key'] ?? env.CONFIG_PRIVATE_KEY_FILE;
  if (values['private-key'] !== undefined && (values.key !== undefined || values['key-file'] !== undefined)) {
    console.error('pass either --private-key (recipient mode) or --key/--key-file (environment key), not both');
    return 2;
  }
  try {
    const keyFile = values['key-file'] ?? env.CONFIG_KEY_FILE;
    const key =
      privateKeyFile !== undefined && values.key === undefined && values['key-file'] === undefined
        ? undefined
        : (values.key ?? env.CONFIG_KEY ?? (keyFile !== undefined ? readFileSync(keyFile, 'utf8').trim() : undefined));
    if (key === undefined && privateKeyFile === undefined) {
      console.error('no key: pass --key, --key-file, --private-key, CONFIG_KEY, CONFIG_KEY_FILE or CONFIG_PRIVATE_KEY_FILE');
      return 2;
    }
    const caFile = values.ca ?? env.CONFIG_CA_FILE;
    const client = createConfigClient({
      baseUrl: values.url ?? env.CONFIG_SERVER_URL ?? 'https://localhost:6666',
      ca: caFile !== undefined ? readFileSync(caFile) : undefined,
      fingerprint: values.fingerprint ?? env.CONFIG_FINGERPRINT,
      backend,
    });
    const [envName, fileName] = [target.slice(0, slash), target.slice(slash + 1)];
    let file;
    if (key !== undefined) {
      file = await client.fetchFile(envName, fileName, key);
    } else {
      const privateKey = readPrivateKey(privateKeyFile!);
      file = await client.fetchFileWithPrivateKey(envName, fileName, privateKey);
    }
    if (values.out !== undefined) writeFileSync(values.out, file.content, { mode: 0o600 });
    else stdout.write(file.content);
    return 0;
  } catch (err) {
    if (err instanceof ConfigClientError) {
      console.error(`config-client: ${err.message}${err.serverError?.code ? ` (${err.serverError.code})` : ''}`);
    } else {
      console.error(`config-client: ${(err as Error).message}`);
    }
    return 1;
  }
}

function readPrivateKey(path: string) {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigClientError(
      'INVALID_ARGUMENT',
      `cannot read the private key file ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if ((statSync(path).mode & 0o077) !== 0) console.error(`config-client: warning: ${path} is readable by others; chmod 600 it`);
  return parseClientPrivateKey(text);
}

if (require.main === module) {
  runCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
