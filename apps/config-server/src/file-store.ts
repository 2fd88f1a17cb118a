import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Logger } from '@repo/service';
import { AppError } from '@repo/errors';
import { parseEnv, resolvedLength, resolveEnv, substitute, SubstitutionLimitError, type ResolvedEnv } from '@repo/substitution';
import { fileNotFound, type FileRequest } from './file-path';

/** A file ready to be sealed. */
export interface RenderedFile {
  /** Bytes to seal: substituted text, or the file byte for byte when it is not UTF-8 text. */
  content: Buffer;
  /** The last path segment, for `Content-Disposition`. */
  name: string;
  substituted: boolean;
}

/** Options of {@link createFileStore}. */
export interface FileStoreOptions {
  storageDir: string;
  maxFileBytes: number;
  logger: Logger;
  /** How long a rendered file is reused before the disk is looked at again (ms; 0: never reused). */
  cacheMs?: number;
  /** Rendered bytes kept at most (least recently used dropped first). */
  cacheBytes?: number;
  now?: () => number;
}

/** Reads `storage/<env>/<file>` safely and applies the environment's `.env`. */
export interface FileStore {
  /** The file rendered; `fresh` reads the disk even when a rendering younger than `cacheMs` is kept. */
  render(request: FileRequest, options?: { fresh?: boolean }): Promise<RenderedFile>;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Files are opened without blocking: a named pipe (or any special file) in the storage tree would
 * otherwise hold one of libuv's few file-system threads until a writer appears, and a handful of
 * requests would stall every file read of the server (the regular files it does serve are read
 * the same way, O_NONBLOCK changes nothing for them).
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** The `.env` values of an environment, resolved, may hold at most this many times `maxFileBytes` characters in all. */
export const ENV_BUDGET_FACTOR = 4;

/** Unresolved variables logged one by one for a `.env`; past them, one line with how many more. */
const LOGGED_PROBLEMS = 20;

/** The `variable processing error` of a `.env` that cannot be resolved within the limits. */
function envRefused(details: string): AppError {
  return new AppError('INTERNAL_ERROR', { message: 'variable processing error', details });
}

/**
 * Creates the file store. Each environment's `.env` is parsed and resolved once and reused
 * until the file changes. A rendered file is reused for `cacheMs` (default 1 s) before the disk
 * is looked at again: a file served many times a second costs one read a second, and an
 * operator's edit shows within a second. Only successes are kept, within `cacheBytes`.
 */
export function createFileStore(options: FileStoreOptions): FileStore {
  const { storageDir, maxFileBytes, logger } = options;
  const cacheMs = options.cacheMs ?? 1_000;
  const cacheBytes = options.cacheBytes ?? 64 * 1024 * 1024;
  const now = options.now ?? Date.now;
  const envBudget = ENV_BUDGET_FACTOR * maxFileBytes;
  // An environment's `.env`, resolved, or refused (too large once resolved).
  const envCache = new Map<string, { stamp: string; resolved: ResolvedEnv } | { stamp: string; refused: AppError }>();
  // Map order is recency order: a hit is re-inserted at the end, eviction takes from the front.
  const rendered = new Map<string, { file: RenderedFile; at: number }>();
  let renderedBytes = 0;

  function remember(key: string, file: RenderedFile): void {
    if (cacheMs <= 0 || file.content.length > cacheBytes / 4) return;
    forget(key);
    rendered.set(key, { file, at: now() });
    renderedBytes += file.content.length;
    for (const [oldKey] of rendered) {
      if (renderedBytes <= cacheBytes) break;
      forget(oldKey);
    }
  }

  function forget(key: string): void {
    const old = rendered.get(key);
    if (old === undefined) return;
    rendered.delete(key);
    renderedBytes -= old.file.content.length;
  }

  async function loadEnv(env: string, envDir: string): Promise<ResolvedEnv> {
    const path = join(envDir, '.env');
    let stamp = 'none';
    try {
      const s = await stat(path);
      stamp = `${s.ino}:${s.mtimeMs}:${s.ctimeMs}:${s.size}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const cached = envCache.get(env);
    if (cached?.stamp === stamp) {
      if ('refused' in cached) throw cached.refused;
      return cached.resolved;
    }
    let text = '';
    if (stamp !== 'none') {
      const handle = await open(path, OPEN_FLAGS);
      try {
        const info = await handle.stat();
        if (!info.isFile()) throw new Error('.env is not a regular file');
        if (info.size > maxFileBytes) throw new Error('.env exceeds the file size limit');
        text = await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
    }
    const parsed = parseEnv(text);
    for (const issue of parsed.issues) logger.warn({ env, line: issue.line, reason: issue.reason }, '.env line ignored');
    // Each value is capped (1 MiB), not their sum: a short `.env` whose many variables each expand
    // to a large one would take gigabytes. Their total is counted first, without building a value.
    if (resolvedLength(parsed.entries, envBudget) > envBudget) {
      logger.warn({ env, limit: envBudget }, '.env refused: its values, resolved, would exceed the limit');
      const refused = envRefused(`the .env values, resolved, exceed ${envBudget} characters`);
      envCache.set(env, { stamp, refused });
      throw refused;
    }
    const resolved = resolveEnv(parsed.entries);
    // docs/config-server.md, "Variable substitution", rule 4: cycles (and depth or size failures) are reported in the logs, by name.
    // `variable`, not `name`: `name` is the logger's own field (the service), which a second `name` would hide.
    // The first ones only (a cycle of thousands of variables names each), with at most 12 names of a path.
    for (const { name, ...problem } of resolved.problems.slice(0, LOGGED_PROBLEMS)) {
      const path = 'path' in problem && problem.path.length > 12 ? [...problem.path.slice(0, 11), '…'] : undefined;
      logger.warn({ env, variable: name, ...problem, ...(path && { path }) }, `variable not resolved: ${problem.kind}`);
    }
    if (resolved.problems.length > LOGGED_PROBLEMS) {
      logger.warn({ env, more: resolved.problems.length - LOGGED_PROBLEMS }, 'more variables not resolved (not logged one by one)');
    }
    envCache.set(env, { stamp, resolved });
    return resolved;
  }

  // Renderings from disk in progress: the requests that find the cache expired at once share one
  // read instead of each reading the file (only those that accept a cached rendering).
  const reading = new Map<string, Promise<RenderedFile>>();

  return {
    async render(request, renderOptions) {
      const key = `${request.env}/${request.file}`;
      const fresh = renderOptions?.fresh === true;
      const hit = rendered.get(key);
      if (hit !== undefined && !fresh && now() - hit.at < cacheMs) {
        rendered.delete(key);
        rendered.set(key, hit);
        return hit.file;
      }
      if (!fresh) {
        const shared = reading.get(key);
        if (shared !== undefined) return shared;
      }
      const pending = renderFromDisk(request).then((file) => {
        remember(key, file);
        return file;
      });
      if (!fresh && cacheMs > 0) {
        reading.set(key, pending);
        const done = () => {
          if (reading.get(key) === pending) reading.delete(key);
        };
        pending.then(done, done);
      }
      return pending;
    },
  };

  async function renderFromDisk({ env, file }: FileRequest): Promise<RenderedFile> {
    const { envDir, raw, name } = await readServedFile(storageDir, env, file, maxFileBytes);
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      return { content: raw, name, substituted: false }; // binary: served byte for byte
    }
    if (!text.includes('${')) return { content: raw, name, substituted: false };
    const resolved = await loadEnv(env, envDir);
    try {
      const result = substitute(text, resolved, { maxOutputLength: maxFileBytes });
      if (result.missing.length > 0) logger.debug({ env, file, missing: result.missing }, 'placeholders left: variables missing');
      return { content: Buffer.from(result.text, 'utf8'), name, substituted: true };
    } catch (err) {
      if (err instanceof SubstitutionLimitError) {
        throw new AppError('INTERNAL_ERROR', {
          message: 'variable processing error',
          details: 'substituted file exceeds the size limit',
          cause: err,
        });
      }
      throw err;
    }
  }
}

/** The real path of the storage root (resolved at each use: the folder may be replaced). */
async function storageRoot(storageDir: string, env: string, file: string): Promise<string> {
  try {
    return await realpath(storageDir);
  } catch {
    throw fileNotFound(env, file);
  }
}

/**
 * The real path of `storage/<env>`, required to be a folder right below the real storage root:
 * an environment that is a symlink to a folder outside (`storage/etclink -> /etc`) is refused
 * (docs/config-server.md, "Path rules").
 */
async function environmentDir(storageDir: string, env: string, file: string): Promise<{ root: string; envDir: string }> {
  const root = await storageRoot(storageDir, env, file);
  let envDir: string;
  try {
    envDir = await realpath(join(storageDir, env));
  } catch {
    throw fileNotFound(env, file);
  }
  if (!envDir.startsWith(root + sep)) throw new AppError('ACCESS_DENIED');
  return { root, envDir };
}

/**
 * The bytes of `storage/<env>/<file>` as served, with the real folder of the environment and the
 * name the path resolves to: the path rules (real path inside the environment, no dotfile by
 * any name, a regular file) and the size limit, checked before reading.
 */
async function readServedFile(
  storageDir: string,
  env: string,
  file: string,
  maxFileBytes: number,
): Promise<{ envDir: string; raw: Buffer; name: string }> {
  const { root, envDir } = await environmentDir(storageDir, env, file);
  let real: string;
  try {
    real = await realpath(join(envDir, file));
  } catch {
    throw fileNotFound(env, file);
  }
  // A symlink may point anywhere: what is served must really live below storage/<env>/, itself
  // inside the real storage root.
  if (!real.startsWith(envDir + sep) || !real.startsWith(root + sep)) throw new AppError('ACCESS_DENIED');
  // The dotfile rule holds for the name the link resolves to as well (`link.txt -> .env`).
  if (
    relative(envDir, real)
      .split(sep)
      .some((segment) => segment.startsWith('.'))
  )
    throw fileNotFound(env, file);

  const handle = await open(real, OPEN_FLAGS).catch(() => {
    throw fileNotFound(env, file);
  });
  let raw: Buffer;
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw fileNotFound(env, file);
    // Checked before reading, so a huge file is never pulled into memory.
    if (info.size > maxFileBytes) {
      throw new AppError('INTERNAL_ERROR', {
        message: 'file too large',
        details: `files are limited to ${maxFileBytes} bytes`,
      });
    }
    raw = Buffer.allocUnsafe(info.size);
    const { bytesRead } = await handle.read(raw, 0, info.size, 0);
    raw = raw.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  return { envDir, raw, name: real.slice(real.lastIndexOf(sep) + 1) };
}
