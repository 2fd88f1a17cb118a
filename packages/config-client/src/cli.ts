#!/usr/bin/env node
/**
 * config-client get <env>/<file> [options]: fetches a file from the config server, opens it
 * with the environment key (or, in recipient mode, the client's own private key) and writes the
 * plaintext to stdout (or --out). Nothing is written unless the file authenticates, so a wrong
 * key or an altered body never yields garbage.
 *
 * config-client watch <env>/<file> --out <file>: keeps <file> equal to the server's current
 * version, rewriting it atomically (temporary file, then rename) on each change.
 *
 * config-client run <env>/<file> -- <command> [args]: runs the command with the file's
 * KEY=VALUE lines in its environment, restarts it when they change, passes on SIGINT and
 * SIGTERM, and exits with the command's status.
 *
 * config-client keygen --kem x25519|xwing --out <file>: writes a key pair for the recipient
 * mode, the private key with mode 0600, and prints the public key for the operator to register.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { constants as osConstants } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { FILE_VERSION_RE } from '@repo/crypto';
import { CLIENT_VERSION, createConfigClient, type ConfigClient, type FileKey } from './client';
import { formatClientPrivateKey, formatClientPublicKey, generateClientKey, parseClientPrivateKey, parseKemName } from './client-key';
import { parseKeyValueLines } from './env-lines';
import { ConfigClientError } from './errors';

const USAGE = `config-client ${CLIENT_VERSION}
usage: config-client get <env>/<file> [options] [--version V] [--out PATH]
       config-client --help | --version
       config-client watch <env>/<file> --out PATH [options] [--wait S]
       config-client run <env>/<file> [options] [--wait S] -- <command> [args...]
       config-client keygen --kem x25519|xwing --out <file> [--force]

options of get, watch and run:
  --url URL            config server (env CONFIG_SERVER_URL, default https://localhost:6666)
  --key HEX            environment key, 64 hex characters (env CONFIG_KEY)
  --key-file PATH      file holding the key (env CONFIG_KEY_FILE)
  --private-key PATH   recipient mode: your private key file from keygen (env CONFIG_PRIVATE_KEY_FILE);
                       the server seals the file to its public key, which must be registered
  --ca PATH            PEM CA or self-signed server certificate to trust (env CONFIG_CA_FILE)
  --fingerprint SHA256 pin the server certificate's SHA-256 fingerprint (env CONFIG_FINGERPRINT)
  --backend node|noble cryptography implementation (default node)

get:
  --out PATH           write the file here (mode 0600) instead of stdout
  --version V          an earlier version the server keeps (X-Config-Version of an earlier fetch)

watch:
  --out PATH           the file kept current: rewritten atomically (mode 0600) on each change
  --wait S             seconds each request waits for a change (default 25, at most the server's
                       request timeout)

run:
  --wait S             as for watch
  -- COMMAND ARGS      the command, run with the file's KEY=VALUE lines added to its environment
                       and restarted when they change; SIGINT and SIGTERM are passed on to it

keygen:
  --kem x25519|xwing   X25519, or X-Wing (ML-KEM-768 + X25519, post-quantum hybrid)
  --out PATH           private key file (mode 0600); the public key goes to PATH.pub and stdout
  --force              overwrite existing files

exit status: 0 success, 1 failure (message on stderr), 2 usage error; run: the command's status
(128 + the signal number when a signal ended it)`;

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

/**
 * `--version <v>` read as `--version=<v>` when `<v>` begins with `-`: one version in 64 does, and
 * parseArgs would take it for an option and refuse the line. Only a value of a version's shape:
 * `--version --url …` stays the usage error it is.
 */
function versionValuesJoined(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    if (arg === '--version' && next !== undefined && next.startsWith('-') && FILE_VERSION_RE.test(next)) {
      out.push(`--version=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** Runs the CLI; returns the exit status. */
export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  stdout: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  // Everything after the first `--` is the command of `run`, not ours to parse.
  const dashes = argv.indexOf('--');
  const own = versionValuesJoined(dashes === -1 ? argv : argv.slice(0, dashes));
  const command = dashes === -1 ? [] : argv.slice(dashes + 1);
  // `--version` alone is the program's version; after a verb it pins a file version (get).
  if (own.length === 1 && (own[0] === '--version' || own[0] === '-V')) {
    stdout.write(`${CLIENT_VERSION}\n`);
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: own,
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
        version: { type: 'string' },
        wait: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    // One line: what is wrong and where the usage is.
    console.error(`config-client: ${(err as Error).message.split('\n')[0]} (see config-client --help)`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const [verb, target, extra] = positionals;
  if (verb === 'keygen' && target === undefined) {
    try {
      return keygen(values, stdout);
    } catch (err) {
      console.error(`config-client: cannot write the key: ${(err as Error).message}`);
      return 1;
    }
  }
  const slash = target?.indexOf('/') ?? -1;
  if (
    !['get', 'watch', 'run'].includes(verb ?? '') ||
    target === undefined ||
    extra !== undefined ||
    slash <= 0 ||
    slash === target.length - 1
  ) {
    console.error(USAGE);
    return 2;
  }
  if (verb === 'run' && command.length === 0) {
    console.error(`run needs a command after --\n\n${USAGE}`);
    return 2;
  }
  if (verb !== 'run' && dashes !== -1) {
    console.error(`-- and a command go with run only\n\n${USAGE}`);
    return 2;
  }
  if (verb === 'watch' && values.out === undefined) {
    console.error(`watch needs --out\n\n${USAGE}`);
    return 2;
  }
  if (verb !== 'get' && values.version !== undefined) {
    console.error(`--version pins a version: it goes with get only (${verb} follows the current one)`);
    return 2;
  }
  if (verb === 'run' && values.out !== undefined) {
    console.error('run writes no file: --out goes with get and watch');
    return 2;
  }
  const waitSeconds = values.wait === undefined ? 25 : Number(values.wait);
  if (verb === 'get' && values.wait !== undefined) {
    console.error('--wait goes with watch and run');
    return 2;
  }
  if (!/^\d+(\.\d{1,3})?$/.test(values.wait ?? '25') || waitSeconds <= 0) {
    console.error('--wait expected a number of seconds over 0 (at most 3 decimals)');
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
    const keyText =
      privateKeyFile !== undefined && values.key === undefined && values['key-file'] === undefined
        ? undefined
        : (values.key ?? env.CONFIG_KEY ?? (keyFile !== undefined ? readFileSync(keyFile, 'utf8').trim() : undefined));
    if (keyText === undefined && privateKeyFile === undefined) {
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
    const key: FileKey = keyText ?? readPrivateKey(privateKeyFile!);
    const [envName, fileName] = [target.slice(0, slash), target.slice(slash + 1)];
    if (verb === 'watch') return await watchCommand(client, envName, fileName, key, values.out!, waitSeconds);
    if (verb === 'run') return await runCommand(client, envName, fileName, key, waitSeconds, command);
    const file =
      typeof key === 'string'
        ? await client.fetchFile(envName, fileName, key, { version: values.version })
        : await client.fetchFileWithPrivateKey(envName, fileName, key, { version: values.version });
    if (values.out !== undefined) writeFileSync(values.out, file.content, { mode: 0o600 });
    else stdout.write(file.content);
    return 0;
  } catch (err) {
    reportError(err);
    return 1;
  }
}

function reportError(err: unknown): void {
  if (err instanceof ConfigClientError) {
    console.error(`config-client: ${err.message}${err.serverError?.code ? ` (${err.serverError.code})` : ''}`);
  } else {
    console.error(`config-client: ${(err as Error).message}`);
  }
}

/**
 * Replaces `path` with `content` atomically: a temporary file in the same folder (mode 0600),
 * flushed to disk, then renamed over it, so a reader sees the old file or the new one, never
 * half of one.
 */
export function writeFileAtomically(path: string, content: Uint8Array): void {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Resolves when SIGINT or SIGTERM arrives (the signal's name), and stops listening for them afterwards. */
function onStopSignal(handler: (signal: NodeJS.Signals) => void): () => void {
  const listener = (signal: NodeJS.Signals) => handler(signal);
  process.on('SIGINT', listener);
  process.on('SIGTERM', listener);
  return () => {
    process.off('SIGINT', listener);
    process.off('SIGTERM', listener);
  };
}

async function watchCommand(
  client: ConfigClient,
  env: string,
  file: string,
  key: FileKey,
  out: string,
  waitSeconds: number,
): Promise<number> {
  const stop = new AbortController();
  const release = onStopSignal(() => stop.abort());
  try {
    for await (const next of client.watchFile(env, file, key, { waitSeconds, signal: stop.signal, onRetry: retryNote })) {
      writeFileAtomically(out, next.content);
      console.error(`config-client: ${out} written (${env}/${file} version ${next.version ?? 'unknown'})`);
    }
    return 0;
  } finally {
    release();
  }
}

function retryNote(err: ConfigClientError, delayMs: number): void {
  console.error(`config-client: ${err.message}; retrying in ${Math.round(delayMs / 1000)} s`);
}

/** How long a command has to exit after SIGTERM when it is restarted, before SIGKILL. */
const RESTART_GRACE_MS = 10_000;

function exitStatus(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  return 128 + (signal !== null ? (osConstants.signals[signal] ?? 0) : 0);
}

async function runCommand(
  client: ConfigClient,
  env: string,
  file: string,
  key: FileKey,
  waitSeconds: number,
  command: string[],
): Promise<number> {
  const stop = new AbortController();
  let child: ChildProcess | undefined;
  let current: Record<string, string> | undefined;
  let pending: Record<string, string> | undefined; // the variables to restart with, once the child is gone
  let stopping = false;
  let failed = false;
  let killTimer: NodeJS.Timeout | undefined;
  let settle: (status: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => (settle = resolve));

  function start(vars: Record<string, string>): void {
    current = vars;
    const spawned = spawn(command[0]!, command.slice(1), { stdio: 'inherit', env: { ...process.env, ...vars } });
    child = spawned;
    spawned.once('error', (err) => {
      console.error(`config-client: cannot run ${command[0]}: ${err.message}`);
      stop.abort();
      settle(127);
    });
    spawned.once('exit', (code, signal) => {
      clearTimeout(killTimer);
      child = undefined;
      if (pending !== undefined && !stopping) {
        const vars = pending;
        pending = undefined;
        start(vars);
        return;
      }
      // The command ended by itself, or after a signal we passed on: so does the watch.
      stop.abort();
      settle(failed ? 1 : exitStatus(code, signal));
    });
  }

  /** Stops the command (SIGTERM, SIGKILL after the grace); its exit starts it again with `pending`. */
  function restart(): void {
    const running = child;
    if (running === undefined) return;
    running.kill('SIGTERM');
    clearTimeout(killTimer);
    killTimer = setTimeout(() => running.kill('SIGKILL'), RESTART_GRACE_MS);
    killTimer.unref();
  }

  const release = onStopSignal((signal) => {
    stopping = true;
    if (child !== undefined) child.kill(signal);
    else {
      stop.abort();
      settle(exitStatus(null, signal));
    }
  });

  const watching = (async () => {
    for await (const next of client.watchFile(env, file, key, { waitSeconds, signal: stop.signal, onRetry: retryNote })) {
      const { vars, skipped } = parseKeyValueLines(new TextDecoder().decode(next.content));
      if (skipped.length > 0) console.error(`config-client: ${env}/${file}: lines ${skipped.join(', ')} are not KEY=VALUE: skipped`);
      if (stopping) return;
      if (child === undefined && current === undefined) {
        console.error(
          `config-client: running ${command[0]} with ${Object.keys(vars).length} variables from ${env}/${file} (version ${next.version})`,
        );
        start(vars);
      } else if (!sameVars(vars, pending ?? current ?? {})) {
        console.error(`config-client: ${env}/${file} changed (version ${next.version}): restarting ${command[0]}`);
        pending = vars;
        restart();
      }
    }
  })();
  watching.catch((err: unknown) => {
    if (stopping) return;
    reportError(err);
    // The file cannot be had any more (403, 404, a wrong key): the command is stopped with it.
    stopping = true;
    failed = true;
    if (child !== undefined) child.kill('SIGTERM');
    else settle(1);
  });

  try {
    return await finished;
  } finally {
    release();
    stop.abort();
  }
}

function sameVars(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && a[k] === b[k]);
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
  runCli(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(`config-client: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    },
  );
}
