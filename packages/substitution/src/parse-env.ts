import { isValidName } from './names';

/** One `.env` entry. */
export interface EnvEntry {
  /** The value as written, quotes removed. */
  value: string;
  /** Single-quoted values are literal: no `$` expansion. */
  literal: boolean;
}

/** A line of the `.env` file that was ignored, for the logs. */
export interface EnvIssue {
  line: number;
  reason: string;
}

/** What {@link parseEnv} found. */
export interface ParsedEnv {
  entries: Map<string, EnvEntry>;
  issues: EnvIssue[];
}

/**
 * Parses `.env` text: `KEY=VALUE` lines, `#` comments, blank lines, an optional `export `
 * prefix, values optionally in single (literal) or double quotes; an unquoted value ends at
 * ` #`. A line with an invalid name is ignored and reported (docs/config-server.md, "Variable substitution", rule 6);
 * a later definition of a name wins, as in shells.
 */
export function parseEnv(text: string): ParsedEnv {
  const entries = new Map<string, EnvEntry>();
  const issues: EnvIssue[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '' || raw.startsWith('#')) continue;
    const line = raw.startsWith('export ') ? raw.slice(7).trimStart() : raw;
    const eq = line.indexOf('=');
    if (eq <= 0) {
      issues.push({ line: i + 1, reason: 'not of the form KEY=VALUE' });
      continue;
    }
    const name = line.slice(0, eq).trim();
    if (!isValidName(name)) {
      issues.push({ line: i + 1, reason: `invalid variable name "${name.slice(0, 64)}"` });
      continue;
    }
    entries.set(name, parseValue(line.slice(eq + 1).trim()));
  }
  return { entries, issues };
}

function parseValue(rest: string): EnvEntry {
  const quote = rest[0];
  if ((quote === '"' || quote === "'") && rest.length >= 2) {
    const end = rest.lastIndexOf(quote);
    if (end > 0) {
      const inner = rest.slice(1, end);
      if (quote === "'") return { value: inner, literal: true };
      return { value: inner.replace(/\\n/g, '\n').replace(/\\"/g, '"'), literal: false };
    }
  }
  const comment = rest.search(/\s#/);
  return { value: (comment === -1 ? rest : rest.slice(0, comment)).trimEnd(), literal: false };
}
