import { AppError } from '@repo/errors';

/** A validated store request: key and value in lower-case hex, `ttl` in seconds or absent. */
export interface StoreRequest {
  key: string;
  value: string;
  ttl: number | undefined;
}

const KEY_RE = /^[0-9a-fA-F]{64}$/;
const HEX_RE = /^[0-9a-fA-F]*$/;

function invalid(message: string): AppError {
  return new AppError('INVALID_REQUEST', { message });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/**
 * Checks a key (hex, 64 characters) and returns it in lower case, since keys are
 * case-insensitive (docs/storage.md, "Keys and values"). Throws AppError INVALID_REQUEST saying what is wrong.
 */
export function parseKey(input: unknown): string {
  if (input === undefined) throw invalid('"key" is required');
  if (typeof input !== 'string') throw invalid(`"key" must be a string of 64 hex characters, got ${describe(input)}`);
  if (input.length !== 64) throw invalid(`"key" must be 64 hex characters, got length=${input.length}`);
  if (!KEY_RE.test(input)) throw invalid('"key" must contain only hex characters (0-9, a-f)');
  return input.toLowerCase();
}

/**
 * Checks a value: non-empty hex of even length (whole bytes). Returned in lower case: the
 * bytes are what is stored. Throws AppError INVALID_REQUEST saying what is wrong.
 */
export function parseValue(input: unknown): string {
  if (input === undefined) throw invalid('"value" is required');
  if (typeof input !== 'string') throw invalid(`"value" must be a string of hex characters, got ${describe(input)}`);
  if (input.length === 0) throw invalid('"value" must not be empty');
  if (input.length % 2 !== 0) throw invalid(`"value" must have an even number of hex characters, got length=${input.length}`);
  if (!HEX_RE.test(input)) throw invalid('"value" must contain only hex characters (0-9, a-f)');
  return input.toLowerCase();
}

/**
 * Checks an optional `ttl`: absent (or null) gives undefined, otherwise a positive integer
 * number of seconds up to `maxTtlSeconds`. Throws AppError INVALID_REQUEST saying what is wrong.
 */
export function parseTtl(input: unknown, maxTtlSeconds: number): number | undefined {
  if (input === undefined || input === null) return undefined;
  if (typeof input !== 'number' || !Number.isInteger(input) || input < 1 || input > maxTtlSeconds) {
    const got = typeof input === 'number' ? String(input) : describe(input);
    throw invalid(`"ttl" must be a positive integer number of seconds, at most ${maxTtlSeconds}, got ${got}`);
  }
  return input;
}

/** Checks the JSON body of a store request. Throws AppError INVALID_REQUEST saying what is wrong. */
export function parseStoreRequest(body: unknown, maxTtlSeconds: number): StoreRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('request body must be a JSON object {"key", "value", "ttl"?} sent with Content-Type: application/json');
  }
  const record = body as Record<string, unknown>;
  return { key: parseKey(record.key), value: parseValue(record.value), ttl: parseTtl(record.ttl, maxTtlSeconds) };
}

/** A validated touch request: a ttl in seconds, `permanent`, or neither (the store default applies). */
export interface TouchRequest {
  ttl: number | undefined;
  permanent: boolean;
}

/**
 * Checks the JSON body of a touch request: `{ttl}`, `{permanent: true}` (only when the service
 * runs with the permanent option) or `{}`; `ttl` follows the rules of store. Throws AppError
 * INVALID_REQUEST saying what is wrong.
 */
export function parseTouchRequest(body: unknown, maxTtlSeconds: number, permanentAllowed: boolean): TouchRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('request body must be a JSON object {"ttl"} or {"permanent": true} sent with Content-Type: application/json');
  }
  const record = body as Record<string, unknown>;
  const ttl = parseTtl(record.ttl, maxTtlSeconds);
  const permanentInput = record.permanent;
  if (permanentInput !== undefined && permanentInput !== null && typeof permanentInput !== 'boolean') {
    throw invalid(`"permanent" must be true or false, got ${describe(permanentInput)}`);
  }
  const permanent = permanentInput === true;
  if (permanent && ttl !== undefined) throw invalid('send either "ttl" or "permanent": true, not both');
  if (permanent && !permanentAllowed) {
    throw invalid('"permanent": true needs the service to run with the permanent option (STORAGE_PERMANENT or --permanent)');
  }
  return { ttl, permanent };
}
