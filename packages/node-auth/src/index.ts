import { readFileSync, statSync } from 'node:fs';
import type { Logger } from '@repo/service';

/** Options of {@link createNodeCredentials}. */
export interface NodeCredentialsOptions {
  /** User and password: HTTP basic with them, the cookie file is not read. */
  user?: string | undefined;
  password?: string | undefined;
  /** bitcoind's cookie file (`__cookie__:<hex>`), used when no user/password is given. */
  cookieFile?: string | undefined;
  /** The setting that names the cookie file, for messages (e.g. `BITCOIND_COOKIE_FILE`). */
  cookieSetting?: string;
  /** Who is authenticating, for messages (`proxy`, `scanner`). */
  who?: string;
  /** Name the cookie file's path in refusals (not where clients read them: the proxy's). */
  pathInRefusals?: boolean;
  logger?: Logger;
  /** How long a read cookie is trusted before its file is checked for a change again (ms); default 1000. */
  recheckMs?: number;
  now?: () => number;
}

/** Why the node refused a call, as {@link NodeCredentials.refusal} words it. */
export interface NodeRefusal {
  /** `cookie`: the cookie file cannot be read (its errno in the message); `auth`: the credentials were refused. */
  kind: 'cookie' | 'auth';
  message: string;
}

/**
 * The credentials toward a Bitcoin Core node (or the rpc-proxy, which takes the same): HTTP
 * basic with a user and password, or with the content of the node's cookie file, which a node
 * rewrites at each start. The file is re-read when its size, mtime or inode changes, and at once
 * after the node refuses a call (see {@link refreshAfterRefusal}).
 */
export interface NodeCredentials {
  /** The `Authorization` header value; undefined without credentials or while the cookie file cannot be read. */
  authorization(): string | undefined;
  /** After a 401 or 403: re-reads the cookie file; true when the credentials changed (worth one retry). */
  refreshAfterRefusal(): boolean;
  /** The errno code (`EACCES`, `ENOENT`, …) of the last failed read of the cookie file; undefined when it was read. */
  cookieError(): string | undefined;
  /** What to say about a refused call (HTTP `status`): names the cookie file and its errno when it cannot be read. */
  refusal(status: number): NodeRefusal;
}

/** Creates the credentials; reads nothing until the first {@link NodeCredentials.authorization}. */
export function createNodeCredentials(options: NodeCredentialsOptions): NodeCredentials {
  const { logger, cookieFile } = options;
  const recheckMs = options.recheckMs ?? 1_000;
  const now = options.now ?? Date.now;
  const who = options.who ?? 'client';
  const setting = options.cookieSetting ?? 'the cookie file setting';
  const staticAuth =
    options.user !== undefined && options.password !== undefined
      ? `Basic ${Buffer.from(`${options.user}:${options.password}`).toString('base64')}`
      : undefined;
  let cookieAuth: string | undefined;
  let cookieStamp = '';
  let cookieCheckedAt = Number.NEGATIVE_INFINITY;
  let cookieError: string | undefined;

  /**
   * Re-reads the cookie file when its size, mtime or inode changed (or `force`); true when the
   * credentials changed. A file that cannot be read is logged once per errno (an EACCES is a
   * permission problem between this process's user and the node's data directory, an ENOENT a
   * node not started yet or a wrong path), and again when it can be read.
   */
  function refresh(force: boolean): boolean {
    if (staticAuth !== undefined || cookieFile === undefined) return false;
    const t = now();
    if (!force && t - cookieCheckedAt < recheckMs) return false;
    cookieCheckedAt = t;
    try {
      const st = statSync(cookieFile);
      const stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
      if (stamp === cookieStamp && !force && cookieError === undefined) return false;
      const next = `Basic ${Buffer.from(readFileSync(cookieFile, 'utf8').trim()).toString('base64')}`;
      cookieStamp = stamp;
      if (cookieError !== undefined) {
        logger?.info({ cookieFile, was: cookieError }, 'node cookie file readable again');
        cookieError = undefined;
      }
      const changed = next !== cookieAuth;
      if (changed && cookieAuth !== undefined) logger?.info({ cookieFile }, 'node cookie file changed: using the new cookie');
      cookieAuth = next;
      return changed;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
      if (code !== cookieError) {
        const fields = { cookieFile, code, err: (err as Error).message };
        if (code === 'ENOENT') logger?.warn(fields, `node cookie file missing (node not started yet, or ${setting} wrong)`);
        else logger?.error(fields, `cannot read the node cookie file (${code}): the ${who} cannot authenticate to the node`);
      }
      cookieError = code;
      cookieStamp = '';
      cookieAuth = undefined;
      return false;
    }
  }

  return {
    authorization() {
      if (staticAuth !== undefined) return staticAuth;
      refresh(false);
      return cookieAuth;
    },
    refreshAfterRefusal: () => refresh(true),
    cookieError: () => cookieError,
    refusal(status) {
      if (staticAuth === undefined && cookieFile !== undefined && cookieError !== undefined) {
        return {
          kind: 'cookie',
          message: `${who} cannot read the node's cookie file${options.pathInRefusals === true ? ` ${cookieFile}` : ''} (${cookieError}): the node refused the call without it (HTTP ${status})`,
        };
      }
      return { kind: 'auth', message: `node rejected the ${who}'s credentials (HTTP ${status})` };
    },
  };
}
