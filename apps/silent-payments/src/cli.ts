#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageVersion } from '@repo/config';
import { hexToBytes } from '@repo/crypto';
import { PsbtError, signSweepPsbt } from './psbt';

/** `node dist/cli.js --help` (docs/silent-payments.md, "Sweeping"). */
export const USAGE = `Usage: node dist/cli.js <command> [options]

Commands:
  sign --psbt <file|-> --spend-secret <file>
      Signs a sweep PSBT made by POST /psbt with the spend secret (b_spend) offline:
      derives each input's key as b_spend + PSBT_IN_SP_TWEAK (BIP-352, BIP-376), refuses any
      input whose key is not the output's (not ours), signs every input on the taproot key
      path (BIP-341, BIP-340), finalizes and prints the raw transaction hex on stdout.
      --psbt          the PSBT file (base64, or binary), or - for standard input
      --spend-secret  a file holding b_spend as 64 hex characters (the spend.secret file)
      Needs no network: broadcast the hex yourself (sendrawtransaction).

Options:
  -h, --help     this text
  -V, --version  the version

Exit status: 0 signed, 1 refused or failed (one line on stderr), 2 bad usage.`;

/** Where the CLI reads and writes (tests pass their own). */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Buffer;
  readFile: (path: string) => Buffer;
}

const defaultIo: CliIo = {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  readStdin: () => readFileSync(0),
  readFile: (path) => readFileSync(path),
};

class UsageError extends Error {}

function parseOptions(args: string[], allowed: string[]): Map<string, string> {
  const options = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [name, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (!allowed.includes(name)) throw new UsageError(`unknown option ${JSON.stringify(arg.slice(0, 60))} (see --help)`);
    const value = inline ?? args[++i];
    if (value === undefined || value === '') throw new UsageError(`${name} needs a value (see --help)`);
    if (options.has(name)) throw new UsageError(`${name} given twice`);
    options.set(name, value);
  }
  return options;
}

/** The PSBT from a file or stdin: base64 text (as POST /psbt answers it) or the binary form. */
function readPsbt(data: Buffer): Uint8Array {
  if (data.subarray(0, 5).equals(Buffer.from('psbt\xff', 'latin1'))) return new Uint8Array(data);
  const text = data.toString('utf8').trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) throw new PsbtError('the PSBT is neither base64 nor binary');
  return new Uint8Array(Buffer.from(text, 'base64'));
}

/** Runs the CLI with `args` (without node and the script); returns the exit status. */
export function runCli(args: string[], io: CliIo = defaultIo): number {
  try {
    if (args.length === 0 || args[0] === '--help' || args[0] === '-h') {
      (args.length === 0 ? io.stderr : io.stdout)(`${USAGE}\n`);
      return args.length === 0 ? 2 : 0;
    }
    if (args[0] === '--version' || args[0] === '-V') {
      io.stdout(`${packageVersion(join(__dirname, '..', 'package.json'))}\n`);
      return 0;
    }
    const [command, ...rest] = args;
    if (command!.startsWith('-')) throw new UsageError(`unknown option ${JSON.stringify(command!.slice(0, 60))} (see --help)`);
    if (command !== 'sign') throw new UsageError(`unknown command ${JSON.stringify(command!.slice(0, 60))} (see --help)`);
    if (rest.includes('--help') || rest.includes('-h')) {
      io.stdout(`${USAGE}\n`);
      return 0;
    }
    const options = parseOptions(rest, ['--psbt', '--spend-secret']);
    const psbtPath = options.get('--psbt');
    const secretPath = options.get('--spend-secret');
    if (psbtPath === undefined) throw new UsageError('sign needs --psbt <file or -> (see --help)');
    if (secretPath === undefined) throw new UsageError('sign needs --spend-secret <file> (see --help)');
    const secretText = io.readFile(secretPath).toString('utf8').trim();
    if (!/^[0-9a-fA-F]{64}$/.test(secretText)) throw new PsbtError(`${secretPath} must hold the spend secret as 64 hex characters`);
    const secret = hexToBytes(secretText.toLowerCase());
    try {
      const psbt = readPsbt(psbtPath === '-' ? io.readStdin() : io.readFile(psbtPath));
      const signed = signSweepPsbt(psbt, secret);
      io.stdout(`${signed.hex}\n`);
      return 0;
    } finally {
      secret.fill(0);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`error: ${err.message}\n`);
      return 2;
    }
    io.stderr(`error: ${err instanceof PsbtError ? err.message : describeFailure(err)}\n`);
    return 1;
  }
}

/**
 * A failure other than a refusal, in one line: its errno code once (Node's fs messages already
 * begin with it: `ENOENT: no such file or directory, open 'x'`), then the message.
 */
function describeFailure(err: unknown): string {
  if (typeof err !== 'object' || err === null || typeof (err as Error).message !== 'string') return String(err);
  const { code, message } = err as NodeJS.ErrnoException;
  return typeof code === 'string' && !message.startsWith(`${code}:`) ? `${code}: ${message}` : message;
}

if (require.main === module) process.exitCode = runCli(process.argv.slice(2));
