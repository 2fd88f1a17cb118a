import { statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { SecureContextOptions } from 'node:tls';
import type { Logger } from './logger';
import { readTlsFiles, type TlsCredentials } from './tls';

/** A server whose certificate can be swapped in place (`https.Server`, `tls.Server`). */
export interface SecureContextServer {
  setSecureContext(options: SecureContextOptions): void;
}

/** Options of {@link watchCertificate}. */
export interface CertificateWatchOptions {
  certFile: string;
  keyFile: string;
  servers: SecureContextServer[];
  logger: Logger;
  /** Context options kept across reloads (`minVersion`, …). */
  context?: SecureContextOptions;
  /** Stat the files this often as well (ms; a watch can miss changes on some file systems); 0: no polling. Default 30 s. */
  pollMs?: number;
  /** Reload on SIGHUP too (default true). */
  sighup?: boolean;
}

/** The running reload: `reload()` by hand, `close()` to stop watching. */
export interface CertificateWatch {
  /** Reads both files and installs them when they form a valid pair; resolves whether it did. */
  reload(reason?: string): boolean;
  /** SHA-256 fingerprint of the certificate in use. */
  readonly fingerprint: string | undefined;
  close(): void;
}

/** Identity of a file's current content, as stat sees it. */
function stamp(file: string): string {
  try {
    const s = statSync(file);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return 'missing';
  }
}

/**
 * Reloads `TLS_CERT_FILE`/`TLS_KEY_FILE` without a restart (docs/README.md, "Operations"): on
 * SIGHUP, when either file changes (a watch on their folders, so a file replaced by rename, as
 * certbot and Kubernetes do, is seen) and on a slow poll as a fallback. The new pair goes to
 * each server with `setSecureContext`: new connections get it, open ones keep theirs. A pair that
 * does not load (half written, key of another certificate) is logged and the old one kept.
 */
export function watchCertificate(options: CertificateWatchOptions): CertificateWatch {
  const { logger } = options;
  let fingerprint: string | undefined;
  let stamps = `${stamp(options.certFile)}|${stamp(options.keyFile)}`;
  let timer: NodeJS.Timeout | undefined;

  function reload(reason = 'requested'): boolean {
    stamps = `${stamp(options.certFile)}|${stamp(options.keyFile)}`;
    let pair: TlsCredentials;
    try {
      // Checked as at start: the message names the file at fault.
      pair = readTlsFiles(options.certFile, options.keyFile, options.context);
    } catch (err) {
      logger.warn(
        { reason, err: { message: (err as Error).message } },
        'TLS certificate not reloaded: the files do not form a valid pair (the previous one stays)',
      );
      return false;
    }
    const { cert, key, fingerprint: next } = pair;
    for (const server of options.servers) server.setSecureContext({ ...options.context, cert, key });
    if (next !== fingerprint) logger.info({ reason, sha256: next, previous: fingerprint }, 'TLS certificate reloaded');
    fingerprint = next;
    return true;
  }

  // Several events arrive for one replacement: act once they settle.
  const soon = (reason: string) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (`${stamp(options.certFile)}|${stamp(options.keyFile)}` !== stamps) reload(reason);
    }, 100);
    timer.unref();
  };

  const watchers: FSWatcher[] = [];
  for (const dir of new Set([dirname(options.certFile), dirname(options.keyFile)])) {
    const names = new Set([basename(options.certFile), basename(options.keyFile)]);
    try {
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || names.has(String(name))) soon('file changed');
      });
      watcher.on('error', () => undefined);
      watchers.push(watcher);
    } catch (err) {
      logger.warn({ dir, err: { message: (err as Error).message } }, 'cannot watch the certificate folder: polling only');
    }
  }
  const pollMs = options.pollMs ?? 30_000;
  const poll = pollMs > 0 ? setInterval(() => soon('file changed (poll)'), pollMs) : undefined;
  poll?.unref();
  const onHangup = () => void reload('SIGHUP');
  if (options.sighup ?? true) process.on('SIGHUP', onHangup);

  reload('start');
  return {
    reload,
    get fingerprint() {
      return fingerprint;
    },
    close() {
      clearTimeout(timer);
      if (poll !== undefined) clearInterval(poll);
      for (const watcher of watchers) watcher.close();
      process.off('SIGHUP', onHangup);
    },
  };
}
