import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The folder of the recorded Bitcoin Core 29.2 exchanges (real HTTP exchanges with a node,
 * never edited; see its README.md).
 */
export const BITCOIND_FIXTURES_DIR = join(__dirname, '..', 'fixtures', 'bitcoind');

/** One recorded exchange (the README's "File format"). */
export interface BitcoindFixture {
  name: string;
  description: string;
  request: {
    http_method: string;
    path: string;
    jsonrpc?: unknown;
    id?: unknown;
    method?: unknown;
    params?: unknown;
    id_present?: boolean;
    jsonrpc_present?: boolean;
    batch?: unknown[];
    headers: Record<string, string>;
    body_raw: string | null;
  };
  status: number;
  reason: string;
  headers: Record<string, string>;
  headers_list: [string, string][];
  body: unknown;
  body_raw: string;
}

/** Loads a recorded exchange by name (`getblock.verbosity3`). Throws when it does not exist. */
export function loadBitcoindFixture(name: string): BitcoindFixture {
  return JSON.parse(readFileSync(join(BITCOIND_FIXTURES_DIR, `${name}.json`), 'utf8')) as BitcoindFixture;
}

/** Names of every recorded exchange. */
export function listBitcoindFixtures(): string[] {
  return readdirSync(BITCOIND_FIXTURES_DIR)
    .filter((f) => f.endsWith('.json') && !f.startsWith('_'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

/** The recording's context (hashes, txids, addresses, credentials), `_context.json`. */
export function loadBitcoindContext(): Record<string, string | number> {
  return JSON.parse(readFileSync(join(BITCOIND_FIXTURES_DIR, '_context.json'), 'utf8')) as Record<string, string | number>;
}
