import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deriveKey, FILE_VERSION_RE, nodeBackend, open, seal, sha256Hex } from '@repo/crypto';
import type { Logger } from '@repo/service';

/*
 * A version (FILE_VERSION_RE, @repo/crypto): the first 16 bytes (128 bits) of HMAC-SHA256 under the
 * server's version key over a domain tag, the environment, the file and the rendered bytes, in
 * unpadded base64url: 22 characters. Without the key it says nothing about the content, and two
 * files with the same content have different versions.
 */

const ENTRY_SUFFIX = '.v1';

/** Options of {@link createVersionStore}. */
export interface VersionStoreOptions {
  /** The server's version key (32 bytes): the HMAC key and the history's sealing key are derived from it. */
  secret: Uint8Array;
  /** `DATA_DIR/history` */
  dir: string;
  /** Versions kept per file, newest first (`VERSION_HISTORY_MAX`). */
  maxPerFile: number;
  logger: Logger;
}

/** Versions of rendered files and the history of what was served. */
export interface VersionStore {
  /** The version of `content` as `<env>/<file>` (memoised per buffer). */
  versionOf(env: string, file: string, content: Buffer): string;
  /** Keeps `content` as `version` of `<env>/<file>` (a no-op when it is already the newest kept). */
  record(env: string, file: string, version: string, content: Buffer): Promise<void>;
  /** The rendered bytes of an earlier version, or undefined when it is not kept. */
  load(env: string, file: string, version: string): Promise<Buffer | undefined>;
  /**
   * Waits for the writes under way; records after it are dropped (a request still rendering when
   * the server stops, one already answered 408 say: the next start records the version again
   * when it serves it), so nothing is written to `DATA_DIR` once the server has closed.
   */
  close(): Promise<void>;
}

/**
 * Creates the version store. History entries live in `<dir>/<env>/<sha256(file), 32 hex>/` as
 * `<version>.v1`: the rendered file (what was served, after substitution, so a rollback serves
 * the same bytes whatever `.env` holds today) sealed with ChaCha20-Poly1305 under a key derived
 * from the version key, mode 0600. The entry's modification time is when it was last current;
 * past `maxPerFile` entries the oldest are deleted. On reading, the version is computed again
 * from the opened bytes and must match the name, so an entry cannot be swapped for another.
 */
export function createVersionStore(options: VersionStoreOptions): VersionStore {
  const macKey = deriveKey(options.secret, 'config-server/v1/version-mac');
  const sealKey = deriveKey(options.secret, 'config-server/v1/history');
  const memo = new WeakMap<Buffer, { key: string; version: string }>();
  const newest = new Map<string, string>();
  const queues = new Map<string, Promise<void>>();
  let closed = false;

  function versionOf(env: string, file: string, content: Buffer): string {
    const key = `${env}/${file}`;
    const hit = memo.get(content);
    if (hit !== undefined && hit.key === key) return hit.version;
    const mac = createHmac('sha256', macKey).update(`config-server/v1/version\0${env}\0${file}\0`, 'utf8').update(content).digest();
    const version = mac.subarray(0, 16).toString('base64url');
    memo.set(content, { key, version });
    return version;
  }

  const folder = (env: string, file: string) => join(options.dir, env, sha256Hex(new TextEncoder().encode(file)).slice(0, 32));

  async function write(env: string, file: string, version: string, content: Buffer): Promise<void> {
    const dir = folder(env, file);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, version + ENTRY_SUFFIX);
    const t = new Date();
    try {
      await utimes(path, t, t); // already kept: it is the newest again
    } catch {
      const tmp = `${path}.${process.pid}.tmp`;
      await writeFile(tmp, seal(sealKey, content, { backend: nodeBackend }), { mode: 0o600 });
      await rename(tmp, path);
    }
    const names = (await readdir(dir)).filter((n) => n.endsWith(ENTRY_SUFFIX));
    if (names.length <= options.maxPerFile) return;
    const entries = await Promise.all(names.map(async (name) => ({ name, at: (await stat(join(dir, name))).mtimeMs })));
    entries.sort((a, b) => b.at - a.at);
    for (const old of entries.slice(options.maxPerFile)) await unlink(join(dir, old.name)).catch(() => undefined);
  }

  return {
    versionOf,
    record(env, file, version, content) {
      if (closed) return Promise.resolve();
      const key = `${env}/${file}`;
      if (newest.get(key) === version) return queues.get(key) ?? Promise.resolve();
      newest.set(key, version);
      // One write at a time per file, in the order the versions were seen.
      const next = (queues.get(key) ?? Promise.resolve())
        .then(() => write(env, file, version, content))
        .catch((err: unknown) => {
          newest.delete(key);
          options.logger.error({ err, env, file }, 'version history not written');
        });
      queues.set(key, next);
      void next.then(() => {
        if (queues.get(key) === next) queues.delete(key);
      });
      return next;
    },
    async close() {
      closed = true;
      await Promise.all(queues.values());
    },
    async load(env, file, version) {
      if (!FILE_VERSION_RE.test(version)) return undefined;
      let sealed: Buffer;
      try {
        sealed = await readFile(join(folder(env, file), version + ENTRY_SUFFIX));
      } catch {
        return undefined;
      }
      let content: Buffer;
      try {
        content = Buffer.from(open(sealKey, sealed, { backend: nodeBackend }));
      } catch {
        options.logger.warn({ env, file, version }, 'version history entry does not open (another version key?): ignored');
        return undefined;
      }
      const actual = Buffer.from(versionOf(env, file, content));
      if (actual.length !== version.length || !timingSafeEqual(actual, Buffer.from(version))) return undefined;
      return content;
    },
  };
}
