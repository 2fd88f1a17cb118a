#!/usr/bin/env node
/**
 * config-client get <env>/<file> [options]: fetches a file from the config server, opens it
 * with the environment key and writes the plaintext to stdout (or --out). Nothing is written
 * unless the file authenticates, so a wrong key or an altered body never yields garbage.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CLIENT_VERSION, createConfigClient } from './client';
import { ConfigClientError } from './errors';

const USAGE = `config-client ${CLIENT_VERSION}
usage: config-client get <env>/<file> [options]

  --url URL            config server (env CONFIG_SERVER_URL, default https://localhost:6666)
  --key HEX            environment key, 64 hex characters (env CONFIG_KEY)
  --key-file PATH      file holding the key (env CONFIG_KEY_FILE)
  --ca PATH            PEM CA or self-signed server certificate to trust (env CONFIG_CA_FILE)
  --fingerprint SHA256 pin the server certificate's SHA-256 fingerprint (env CONFIG_FINGERPRINT)
  --out PATH           write the file here (mode 0600) instead of stdout
  --backend node|noble cipher implementation (default node)

exit status: 0 success, 1 failure (message on stderr), 2 usage error`;

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
  try {
    const keyFile = values['key-file'] ?? env.CONFIG_KEY_FILE;
    const key = values.key ?? env.CONFIG_KEY ?? (keyFile !== undefined ? readFileSync(keyFile, 'utf8').trim() : undefined);
    if (key === undefined) {
      console.error('no key: pass --key, --key-file, CONFIG_KEY or CONFIG_KEY_FILE');
      return 2;
    }
    const caFile = values.ca ?? env.CONFIG_CA_FILE;
    const client = createConfigClient({
      baseUrl: values.url ?? env.CONFIG_SERVER_URL ?? 'https://localhost:6666',
      ca: caFile !== undefined ? readFileSync(caFile) : undefined,
      fingerprint: values.fingerprint ?? env.CONFIG_FINGERPRINT,
      backend,
    });
    const file = await client.fetchFile(target.slice(0, slash), target.slice(slash + 1), key);
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

if (require.main === module) {
  runCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
