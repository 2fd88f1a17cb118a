import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import type { Logger } from '@repo/service';
import type { Scope } from '@repo/relay-protocol';
import type { ClientToken } from './upgrade';

/** The scopes a token may have (docs/relay.md, "Client tokens"). */
export const TOKEN_SCOPES: readonly Scope[] = ['events', 'payments'];

/** One line of the token file, with the token kept only as its SHA-256. */
export interface TokenEntry {
  name: string;
  scopes: ReadonlySet<Scope>;
  sha256: Buffer;
}

/** A token file that cannot be used: the line and what is wrong (never the token itself). */
export class TokenFileError extends Error {
  override readonly name = 'TokenFileError';
}

const NAME_RE = /^[A-Za-z0-9._:@-]{1,64}$/;
const HASH_RE = /^sha256:([0-9a-fA-F]{64})$/;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Parses the token file: one token a line, `<name> <scopes> <token>`, fields separated by
 * white space; `scopes` a comma-separated list of `events` and `payments`; `token` the token
 * itself (16 to 512 characters without white space) or `sha256:<64 hex>`, the SHA-256 of the
 * token, so the file need not hold the secret. Blank lines and lines starting with `#` are
 * skipped. Names are unique. Throws TokenFileError naming the line.
 */
export function parseTokenFile(text: string): TokenEntry[] {
  const entries: TokenEntry[] = [];
  const names = new Set<string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const where = `line ${i + 1}`;
    const fields = line.split(/\s+/);
    if (fields.length !== 3) throw new TokenFileError(`${where}: expected "<name> <scopes> <token>", got ${fields.length} field(s)`);
    const [name, scopeList, token] = fields as [string, string, string];
    if (!NAME_RE.test(name)) throw new TokenFileError(`${where}: name must be 1 to 64 of A-Za-z0-9._:@-`);
    if (names.has(name)) throw new TokenFileError(`${where}: name "${name}" is used twice`);
    const scopes = new Set<Scope>();
    for (const s of scopeList.split(',')) {
      if (!(TOKEN_SCOPES as readonly string[]).includes(s)) {
        throw new TokenFileError(
          `${where} (${name}): unknown scope ${JSON.stringify(s.slice(0, 32))}; expected ${TOKEN_SCOPES.join(', ')}`,
        );
      }
      scopes.add(s as Scope);
    }
    const hashed = HASH_RE.exec(token);
    if (hashed === null && (token.length < 16 || token.length > 512)) {
      throw new TokenFileError(`${where} (${name}): token must be 16 to 512 characters, or sha256:<64 hex>`);
    }
    names.add(name);
    entries.push({ name, scopes, sha256: hashed ? Buffer.from(hashed[1]!, 'hex') : sha256(token) });
  });
  return entries;
}

/**
 * Finds the entry of `token`: its SHA-256 is compared with every entry's in constant time
 * (`timingSafeEqual` on 32 bytes, no early exit), so neither the match nor its position shows
 * in the timing.
 */
export function lookupToken(entries: readonly TokenEntry[], token: string): TokenEntry | undefined {
  const digest = sha256(token);
  let found: TokenEntry | undefined;
  for (const entry of entries) if (timingSafeEqual(digest, entry.sha256) && found === undefined) found = entry;
  return found;
}

/** Options of {@link loadTokenFile}. */
export interface TokenFileOptions {
  file: string;
  logger: Logger;
  /** How often the file's modification is checked (ms). */
  intervalMs: number;
  /** Called after a reload with the names that are gone (their connections should be closed). */
  onReload?: (removed: string[]) => void;
}

/** The client tokens of the token file, kept current. */
export interface TokenFile {
  lookup(token: string): ClientToken | undefined;
  names(): string[];
  close(): void;
}

/**
 * Reads the token file and watches it (by polling its modification time, which also sees an
 * editor's write-and-rename): a valid new version replaces the tokens at once; an invalid one
 * is logged (the line, never a token) and the previous tokens stay. Throws TokenFileError when
 * the file cannot be read or parsed at start.
 */
export function loadTokenFile(options: TokenFileOptions): TokenFile {
  const { file, logger } = options;
  const read = (): TokenEntry[] => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new TokenFileError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    return parseTokenFile(text);
  };
  let entries = read();
  const describe = (list: readonly TokenEntry[]) => list.map((e) => `${e.name} (${[...e.scopes].join(',')})`);
  logger.info({ file, tokens: describe(entries) }, 'client tokens loaded');

  const onChange = (current: Stats, previous: Stats) => {
    if (current.mtimeMs === previous.mtimeMs && current.size === previous.size && current.ino === previous.ino) return;
    let next: TokenEntry[];
    try {
      next = read();
    } catch (err) {
      logger.error({ file, error: (err as Error).message }, 'token file not reloaded: keeping the previous tokens');
      return;
    }
    const kept = new Map(next.map((e) => [e.name, e.sha256]));
    const removed = entries.filter((e) => !kept.get(e.name)?.equals(e.sha256)).map((e) => e.name);
    entries = next;
    logger.info({ file, tokens: describe(entries), removed }, 'client tokens reloaded');
    if (removed.length > 0) options.onReload?.(removed);
  };
  watchFile(file, { interval: options.intervalMs, persistent: false }, onChange);

  return {
    lookup(token) {
      const entry = lookupToken(entries, token);
      return entry === undefined ? undefined : { name: entry.name, scopes: entry.scopes };
    },
    names: () => entries.map((e) => e.name),
    close: () => unwatchFile(file, onChange),
  };
}
