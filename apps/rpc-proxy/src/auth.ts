import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** One `rpcauth` credential: user, salt and HMAC-SHA256(salt, password) in hex. */
export interface RpcAuthEntry {
  user: string;
  salt: string;
  hash: string;
}

/** The user name of cookie authentication, as bitcoind's. */
export const COOKIE_USER = '__cookie__';

/**
 * Parses `rpcauth` lines as Bitcoin Core's share/rpcauth/rpcauth.py prints them
 * (`rpcauth=alice:<salt>$<hmac>`; the `rpcauth=` prefix is optional), separated by newlines,
 * commas or spaces. Throws a RangeError naming the malformed entry's user.
 */
export function parseRpcAuthLines(text: string): RpcAuthEntry[] {
  const entries: RpcAuthEntry[] = [];
  for (const raw of text.split(/[\s,]+/).filter(Boolean)) {
    const line = raw.startsWith('rpcauth=') ? raw.slice('rpcauth='.length) : raw;
    const m = /^([^:$]+):([^$]+)\$([0-9a-fA-F]{64})$/.exec(line);
    if (!m) throw new RangeError(`malformed entry for ${line.split(':')[0] ?? '?'}: expected user:salt$hmac`);
    entries.push({ user: m[1] as string, salt: m[2] as string, hash: (m[3] as string).toLowerCase() });
  }
  return entries;
}

/** Makes an rpcauth line for `user` and `password` (what rpcauth.py does), for tests and docs. */
export function makeRpcAuthLine(user: string, password: string, salt = randomBytes(16).toString('hex')): string {
  return `${user}:${salt}$${createHmac('sha256', salt).update(password).digest('hex')}`;
}

/** SHA-256 of a string (`crypto.hash`: one call, no Hash object). */
function sha256(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}

/** Equal in constant time for equal lengths; hashing first hides the length too. */
function timingSafeStringEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/**
 * Equal in constant time, without hashing (the hot path: a SHA-256 of each would cost ten times
 * more). Every character of the secret `known` is compared, against `given` read
 * modulo its length, so the time depends on `known`'s length only, never on where `given`
 * differs nor on `given`'s length; there is no branch on the data.
 */
export function constantTimeStringEqual(given: string, known: string): boolean {
  if (given.length === 0) return known.length === 0;
  let diff = given.length ^ known.length;
  for (let i = 0; i < known.length; i++) diff |= given.charCodeAt(i % given.length) ^ known.charCodeAt(i);
  return diff === 0;
}

/**
 * Authorization header values already verified, kept so that the next request of the same
 * client costs a few constant-time comparisons ({@link constantTimeStringEqual}) instead of
 * the whole check (an rpcauth HMAC per entry). Credentials do not change while the proxy
 * runs, so an entry never goes stale; the oldest goes first past this many.
 */
export const VERIFIED_HEADER_CACHE_SIZE = 8;

/** Outcome of {@link Authenticator.check}. */
export type AuthResult = { ok: true; user: string } | { ok: false; reason: 'missing' | 'invalid' };

/** Checks the `Authorization` header of a client request. */
export interface Authenticator {
  check(header: string | undefined): AuthResult;
}

/** Options of {@link createAuthenticator}. */
export interface AuthenticatorOptions {
  /** The cookie secret (the part after `__cookie__:`). */
  cookie: string;
  user?: string;
  password?: string;
  rpcAuth?: RpcAuthEntry[];
}

/**
 * Basic authentication as bitcoind's RPCAuthorized: the cookie, the plain user/password, or
 * any rpcauth entry of that user. Every comparison is constant-time, and every candidate is
 * tried, so the time does not tell which part was wrong.
 */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const plain: string[] = [`${COOKIE_USER}:${options.cookie}`];
  if (options.user !== undefined && options.password !== undefined) plain.push(`${options.user}:${options.password}`);
  const rpcAuth = options.rpcAuth ?? [];
  const verified: { header: string; user: string }[] = [];
  return {
    check(header) {
      if (header === undefined) return { ok: false, reason: 'missing' };
      // Every verified header is compared (constant time), whichever matches.
      let cachedUser: string | undefined;
      for (const entry of verified) if (constantTimeStringEqual(header, entry.header)) cachedUser = entry.user;
      if (cachedUser !== undefined) return { ok: true, user: cachedUser };
      if (!header.startsWith('Basic ')) return { ok: false, reason: 'invalid' };
      const b64 = header.slice(6).trim();
      if (b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return { ok: false, reason: 'invalid' };
      const userPass = Buffer.from(b64, 'base64').toString('utf8');
      const colon = userPass.indexOf(':');
      const user = colon >= 0 ? userPass.slice(0, colon) : userPass;
      const pass = colon >= 0 ? userPass.slice(colon + 1) : '';
      let ok = false;
      for (const candidate of plain) ok = timingSafeStringEqual(userPass, candidate) || ok;
      for (const entry of rpcAuth) {
        const hmac = createHmac('sha256', entry.salt).update(pass).digest('hex');
        const userOk = timingSafeStringEqual(user, entry.user);
        const hashOk = timingSafeStringEqual(hmac, entry.hash);
        ok = (userOk && hashOk) || ok;
      }
      if (!ok) return { ok: false, reason: 'invalid' };
      verified.push({ header, user });
      if (verified.length > VERIFIED_HEADER_CACHE_SIZE) verified.shift();
      return { ok: true, user };
    },
  };
}
