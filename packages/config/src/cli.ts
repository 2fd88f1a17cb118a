import { readFileSync } from 'node:fs';

/** One environment variable of a command: its name, default (as the help shows it) and meaning. */
export interface EnvVariable {
  name: string;
  default: string;
  description: string;
}

/** One command-line option (`--name` or `--name <value>`). */
export interface CliOption {
  /** `--permanent`, or `--out <file>` for an option that takes a value. */
  flag: string;
  description: string;
}

/** What `--help` prints and which options a command knows. */
export interface CommandSpec {
  /** The command's name, first word of every message. */
  name: string;
  version: string;
  /** One line per form, without the name: `[options]`, `keygen --env <env>`. */
  usage: string[];
  summary: string;
  options?: CliOption[];
  /** The environment variables the command reads (one table per app: the README's). */
  env?: EnvVariable[];
  /** Words allowed as the first argument (subcommands); none: no positional argument. */
  positionals?: 'none' | 'any';
}

/** How {@link handleCommandLine} writes and exits (tests pass their own). */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  exit: (code: number) => never;
}

const PROCESS_IO: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  exit: (code) => process.exit(code),
};

/** The `--help` text: usage, options (with `--help` and `--version`), environment variables with defaults. */
export function helpText(spec: CommandSpec): string {
  const lines = [`${spec.name} ${spec.version}: ${spec.summary}`, '', 'Usage:'];
  for (const form of spec.usage) lines.push(`  ${spec.name} ${form}`.trimEnd());
  const options = [
    ...(spec.options ?? []),
    { flag: '--help, -h', description: 'print this help and exit' },
    { flag: '--version, -V', description: 'print the version and exit' },
  ];
  const width = Math.max(...options.map((o) => o.flag.length));
  lines.push('', 'Options:');
  for (const o of options) lines.push(`  ${o.flag.padEnd(width)}  ${o.description}`);
  if (spec.env !== undefined && spec.env.length > 0) {
    const nameWidth = Math.max(...spec.env.map((v) => v.name.length));
    const defaultWidth = Math.max(...spec.env.map((v) => v.default.length), 'default'.length);
    lines.push('', "Environment (also read from the app folder's .env file; variables already set win):");
    lines.push(`  ${'name'.padEnd(nameWidth)}  ${'default'.padEnd(defaultWidth)}  meaning`);
    for (const v of spec.env) lines.push(`  ${v.name.padEnd(nameWidth)}  ${v.default.padEnd(defaultWidth)}  ${v.description}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The option names a flag declares: `--out <file>` declares `--out` taking a value. */
function declared(spec: CommandSpec): Map<string, boolean> {
  const known = new Map<string, boolean>();
  for (const o of spec.options ?? []) {
    for (const part of o.flag.split(',')) {
      const [name, value] = part.trim().split(/\s+/, 2);
      if (name !== undefined && name.startsWith('-')) known.set(name, value !== undefined);
    }
  }
  return known;
}

/**
 * Answers `--help` (the text on stdout, exit 0) and `--version` (exit 0), and refuses an unknown
 * option (or an argument where none is taken) with one line on stderr and exit status 2, as
 * getopt-style tools do. Returns otherwise, leaving the known options to the command.
 */
export function handleCommandLine(spec: CommandSpec, argv: readonly string[] = process.argv.slice(2), io: CliIo = PROCESS_IO): void {
  const known = declared(spec);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      io.stdout(helpText(spec));
      io.exit(0);
    }
    if (arg === '--version' || arg === '-V') {
      io.stdout(`${spec.version}\n`);
      io.exit(0);
    }
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg.startsWith('-')) {
      const name = arg.split('=', 1)[0]!;
      if (!known.has(name)) {
        io.stderr(`${spec.name}: unknown option '${name}' (see ${spec.name} --help)\n`);
        io.exit(2);
      }
      if (known.get(name) === true && !arg.includes('=')) i++;
    } else if ((spec.positionals ?? 'none') === 'none') {
      io.stderr(`${spec.name}: unexpected argument '${arg.slice(0, 60)}' (see ${spec.name} --help)\n`);
      io.exit(2);
    }
  }
}

/** The `version` of the package.json at `path` (`0.0.0` when it cannot be read). */
export function packageVersion(path: string): string {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
