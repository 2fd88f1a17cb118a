import { closeSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { RequestHandler } from 'express';
import type { Logger } from '@repo/service';
import { fileRequestOf } from './file-path';
import { ENCRYPTION_MODES } from './recipient';
import type { EndHook, Scope } from './request-scope';

/** One line of the audit log (docs/config-server.md, "Audit log"). Never a key, never content. */
export interface AuditRecord {
  /** ISO 8601, UTC, milliseconds. */
  time: string;
  /** The client's address as the server saw it (the TCP peer). */
  ip: string | null;
  env: string | null;
  file: string | null;
  /** The raw path, only when it could not be read as `<env>/<file>` (traversal attempts and the like). */
  path?: string;
  /** The version served (200) or confirmed (304); null when nothing was. */
  version: string | null;
  /** The version asked for with `?version=`, when one was. */
  requested?: string;
  /** `psk`, `hpke-x25519` or `hpke-xwing`; null when the recipient headers could not be read. */
  mode: string | null;
  /** The registered client key's name (HPKE modes), else null. */
  client: string | null;
  /** First 16 hex of SHA-256 of the client public key presented (registered or not), else null. */
  fingerprint: string | null;
  /** HTTP status; 0 when the client went away before an answer. */
  status: number;
  /** The error code of a refusal. */
  code?: string;
  /** `?wait=` requests: how long the request was held (ms). */
  waitedMs?: number;
}

/** What the route adds to a request's audit line (`res.locals.audit`). */
export type AuditFields = Partial<
  Pick<AuditRecord, 'env' | 'file' | 'path' | 'version' | 'requested' | 'mode' | 'client' | 'fingerprint' | 'code' | 'waitedMs'>
>;

/** Options of {@link createAuditLog}. */
export interface AuditLogOptions {
  /** `AUDIT_LOG_FILE` */
  path: string;
  /** Rotate when the file would pass this size (`AUDIT_LOG_MAX_BYTES`). */
  maxBytes: number;
  /** Rotated files kept: `<path>.1` (newest) to `<path>.<keep>` (`AUDIT_LOG_KEEP`). */
  keep: number;
  logger: Logger;
}

/** The append-only audit log. */
export interface AuditLog {
  /** Creates the folder (mode 0700) and opens the file (mode 0600): the app's `start()`. */
  open(): void;
  write(record: AuditRecord): void;
  close(): void;
}

/**
 * The audit log (mode 0600: it names clients), touching no file until `open()`. Lines are appended with one synchronous
 * write each, so a line is in the file before the next request is looked at and a crash loses
 * none. When a line would take the file past `maxBytes`, `<path>.<n>` become `<path>.<n+1>` (the
 * last dropped), the file becomes `<path>.1`, and a new one is started.
 */
export function createAuditLog(options: AuditLogOptions): AuditLog {
  let fd: number | undefined;
  let size = 0;
  let failed = false;

  function openFile(): number {
    const handle = openSync(options.path, 'a', 0o600);
    size = statSync(options.path).size;
    return handle;
  }

  function rotate(): void {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
    rmSync(`${options.path}.${options.keep}`, { force: true });
    for (let n = options.keep - 1; n >= 1; n--) {
      try {
        renameSync(`${options.path}.${n}`, `${options.path}.${n + 1}`);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    if (options.keep > 0) renameSync(options.path, `${options.path}.1`);
    else rmSync(options.path, { force: true });
  }

  return {
    open() {
      mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
      fd ??= openFile();
    },
    write(record) {
      const line = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
      try {
        fd ??= openFile();
        if (size > 0 && size + line.length > options.maxBytes) {
          rotate();
          fd = openFile();
        }
        writeSync(fd, line);
        size += line.length;
        failed = false;
      } catch (err) {
        // The service keeps serving; the request log still has the request. Said once per outage.
        if (!failed) options.logger.error({ err, path: options.path }, 'audit log write failed');
        failed = true;
        if (fd !== undefined) {
          try {
            closeSync(fd);
          } catch {
            // already gone
          }
        }
        fd = undefined;
      }
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

const KEM_MODES: Readonly<Record<string, string>> = {
  x25519: ENCRYPTION_MODES.X25519,
  'x-wing': ENCRYPTION_MODES['X-Wing'],
  xwing: ENCRYPTION_MODES['X-Wing'],
};

/** The two halves of the audit trail: {@link AuditTrail.mark} in the guards, {@link AuditTrail.end} when a response ends. */
export interface AuditTrail {
  /** Opens the audit line of a `GET`/`HEAD` of `/<env>/<file>` in `res.locals.audit`. */
  mark: RequestHandler;
  /** Writes the line of a request {@link AuditTrail.mark} opened one for. */
  end: EndHook;
}

/**
 * One audit line per `GET`/`HEAD` of `/<env>/<file>` when its response ends, whatever answered
 * it: the file route, or a guard before it (429, 503, 408) or an error (403, 404, 400). The route
 * adds what only it knows in `res.locals.audit`. Other endpoints are not audited.
 */
export function auditTrail(audit: AuditLog, now: () => number = Date.now): AuditTrail {
  return {
    mark(req, res, next) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        next();
        return;
      }
      const rawPath = req.originalUrl.split('?', 1)[0]!;
      if (rawPath.indexOf('/', 1) === -1) {
        next(); // one segment: /health, /info, unknown endpoints
        return;
      }
      let env: string | null = null;
      let file: string | null = null;
      try {
        const parsed = fileRequestOf(req, res);
        if (parsed) ({ env, file } = parsed);
      } catch {
        // refused by the route as well; the raw path goes in the line instead
      }
      const kem = req.headers['x-client-kem'];
      const hasRecipient = kem !== undefined || req.headers['x-client-public-key'] !== undefined;
      const fields: AuditFields = {
        env,
        file,
        path: rawPath,
        mode: hasRecipient ? (typeof kem === 'string' ? (KEM_MODES[kem.trim().toLowerCase()] ?? null) : null) : ENCRYPTION_MODES.psk,
      };
      res.locals.audit = fields;
      next();
    },
    end(req, res, status) {
      const f = res.locals.audit as AuditFields | undefined;
      if (f === undefined) return;
      const record: AuditRecord = {
        time: new Date(now()).toISOString(),
        ip: (res.locals.scope as Scope | undefined)?.ip ?? req.ip ?? req.socket.remoteAddress ?? null,
        env: f.env ?? null,
        file: f.file ?? null,
        ...(f.env == null || f.file == null ? { path: (f.path ?? '').slice(0, 300) } : {}),
        version: f.version ?? null,
        ...(f.requested !== undefined ? { requested: f.requested } : {}),
        mode: f.mode ?? null,
        client: f.client ?? null,
        fingerprint: f.fingerprint ?? null,
        status,
        ...(f.code !== undefined ? { code: f.code } : {}),
        ...(f.waitedMs !== undefined ? { waitedMs: f.waitedMs } : {}),
      };
      audit.write(record);
    },
  };
}
