#!/usr/bin/env node
/**
 * Operator commands. `key <env>` prints the environment's 32-byte key in hex, for handing to
 * that environment's clients; it is the same key the server uses (key file, or HKDF of the
 * master key), so run it with the server's environment (`DATA_DIR`, `KEYS_DIR`, `CONFIG_MASTER_KEY`).
 */
import { resolve } from 'node:path';
import { bytesToHex } from '@repo/crypto';
import { ConfigError, handleCommandLine, loadDotEnvFile, type CommandSpec } from '@repo/config';
import { COMMAND as SERVER } from './command';
import { loadConfig } from './config';
import { ENV_RE } from './file-path';
import { createKeyring } from './keyring';
import { loadKey, masterKeySource } from './keys';

const USAGE = 'usage: config-server-key key <env>      print the environment key (64 hex characters)';

/** `--help` lists the variables the key is computed from (the server's, with their defaults). */
const KEYS_FROM = new Set(['DATA_DIR', 'KEYS_DIR', 'CONFIG_MASTER_KEY']);
const COMMAND: CommandSpec = {
  name: 'config-server-key',
  version: SERVER.version,
  summary: "prints an environment's key, the one the server uses, for handing to that environment's clients",
  usage: ['key <env>'],
  env: (SERVER.env ?? []).filter((v) => KEYS_FROM.has(v.name)),
  positionals: 'any',
};

function run(argv: string[]): number {
  handleCommandLine(COMMAND, argv);
  const [command, env] = argv;
  if (command !== 'key' || env === undefined) {
    console.error(USAGE);
    return 2;
  }
  if (!ENV_RE.test(env)) {
    console.error('env must be 1 to 50 letters, digits or hyphens');
    return 2;
  }
  loadDotEnvFile(resolve(__dirname, '..', '.env'));
  const config = loadConfig();
  const master = loadKey(masterKeySource(config));
  const found = createKeyring({ keysDir: config.keysDir, masterKey: master.key }).keyFor(env);
  process.stdout.write(`${bytesToHex(found.key)}\n`);
  console.error(
    `environment ${env}: key from ${found.source === 'file' ? `${config.keysDir}/${env}.key` : 'the master key (HKDF-SHA256)'}, fingerprint ${found.fingerprint}`,
  );
  return 0;
}

try {
  process.exitCode = run(process.argv.slice(2));
} catch (err) {
  console.error(err instanceof ConfigError || err instanceof TypeError ? err.message : 'failed to read the key');
  process.exitCode = 1;
}
