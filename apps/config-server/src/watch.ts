import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AppError } from '@repo/errors';
import type { Logger } from '@repo/service';
import type { FileRequest } from './file-path';
import type { RenderedFile } from './file-store';

/** A rendering and its version. */
export interface VersionedFile {
  file: RenderedFile;
  version: string;
}

/** Options of {@link createWatchHub}. */
export interface WatchHubOptions {
  storageDir: string;
  /** Renders the file from disk (never from a cache) and computes its version. */
  render(request: FileRequest): Promise<VersionedFile>;
  /** How often watched files are also looked at with `stat`, in case a file system event is missed (ms). */
  pollMs: number;
  /** Requests waiting at once, server-wide, before 503. */
  maxWaiting: number;
  logger: Logger;
  /** Use `fs.watch` besides the poll (default true; false leaves the poll alone, as on a file system without events). */
  fsEvents?: boolean;
}

/** What a wait ended with. */
export type WaitOutcome =
  | { kind: 'changed'; file: VersionedFile }
  | { kind: 'failed'; error: unknown }
  | { kind: 'timeout' }
  | { kind: 'closed' }
  | { kind: 'cancelled' };

/** Change watch for `GET /<env>/<file>?wait=`: one watcher per file, shared by every waiting request. */
export interface WatchHub {
  /**
   * Resolves when the version of the file differs from `known` (the version the client holds), when `ms`
   * have passed, when `signal` aborts (the client went away) or when the hub is closed.
   */
  waitForChange(request: FileRequest, known: string, ms: number, signal: AbortSignal): Promise<WaitOutcome>;
  /** Ends every wait (`closed`) and stops every watcher; later waits end at once. */
  close(): void;
  /** Files watched and requests waiting, for tests and the benchmark. */
  readonly stats: { files: number; waiting: number };
}

interface Waiter {
  known: string;
  done(outcome: WaitOutcome): void;
}

interface FileWatch {
  request: FileRequest;
  waiters: Set<Waiter>;
  watchers: FSWatcher[];
  poll: NodeJS.Timeout;
  stamps: string;
  current: string | undefined;
  checking: boolean;
  again: boolean;
  debounce: NodeJS.Timeout | undefined;
}

/**
 * Creates the hub. A file is watched while someone waits on it: `fs.watch` on the folder holding
 * it and on the environment's folder (for `.env`; editors often replace a file by renaming, which
 * a watch on the file itself would lose), plus a `stat` of both every `pollMs` as a fallback for
 * file systems whose events do not arrive (network mounts, some container mounts). Any sign of
 * change renders the file once and answers every waiter whose version differs; the others keep
 * waiting.
 */
export function createWatchHub(options: WatchHubOptions): WatchHub {
  const files = new Map<string, FileWatch>();
  let waiting = 0;
  let closed = false;

  const paths = (r: FileRequest) => pathsOf(options.storageDir, r);
  const stampsOf = (r: FileRequest) => stampsIn(options.storageDir, r);

  function start(key: string, request: FileRequest): FileWatch {
    const w: FileWatch = {
      request,
      waiters: new Set(),
      watchers: [],
      poll: setInterval(() => void pollOnce(w), options.pollMs),
      stamps: '',
      current: undefined,
      checking: false,
      again: false,
      debounce: undefined,
    };
    w.poll.unref();
    const { envDir, fileDir, filePath } = paths(request);
    const name = filePath.slice(fileDir.length + 1);
    for (const dir of options.fsEvents === false ? [] : new Set([fileDir, envDir])) {
      try {
        const watcher = watch(dir, { persistent: false }, (_event, changed) => {
          // A folder's events name the entry; anything else in the folder is not ours.
          if (changed === null || changed === name || changed === '.env' || dir !== fileDir) schedule(w);
        });
        watcher.on('error', (err) => {
          options.logger.warn({ env: request.env, file: request.file, err: err.message }, 'file watch failed: polling only');
          watcher.close();
        });
        w.watchers.push(watcher);
      } catch (err) {
        options.logger.debug({ env: request.env, dir, err: (err as Error).message }, 'cannot watch folder: polling only');
      }
    }
    files.set(key, w);
    void stampsOf(request).then((s) => (w.stamps = s));
    schedule(w); // a change between the caller's render and the watch starting is caught here
    return w;
  }

  function stop(key: string, w: FileWatch): void {
    clearInterval(w.poll);
    if (w.debounce) clearTimeout(w.debounce);
    for (const watcher of w.watchers) watcher.close();
    files.delete(key);
  }

  async function pollOnce(w: FileWatch): Promise<void> {
    const s = await stampsOf(w.request);
    if (s !== w.stamps) {
      w.stamps = s;
      schedule(w);
    }
  }

  /** Coalesces a burst of events (an editor's write, chmod and rename) into one render. */
  function schedule(w: FileWatch): void {
    if (w.debounce !== undefined) return;
    w.debounce = setTimeout(() => {
      w.debounce = undefined;
      void check(w);
    }, 25);
    w.debounce.unref();
  }

  async function check(w: FileWatch): Promise<void> {
    if (w.checking) {
      w.again = true;
      return;
    }
    w.checking = true;
    try {
      do {
        w.again = false;
        let outcome: WaitOutcome | undefined;
        try {
          const latest = await options.render(w.request);
          w.current = latest.version;
          outcome = { kind: 'changed', file: latest };
        } catch (error) {
          w.current = undefined;
          outcome = { kind: 'failed', error };
        }
        for (const waiter of [...w.waiters]) {
          if (outcome.kind === 'failed' || waiter.known !== outcome.file.version) waiter.done(outcome);
        }
      } while (w.again);
    } finally {
      w.checking = false;
    }
  }

  return {
    waitForChange(request, known, ms, signal) {
      if (closed) return Promise.resolve({ kind: 'closed' });
      if (waiting >= options.maxWaiting) {
        throw new AppError('SERVICE_UNAVAILABLE', { details: 'too many waiting requests', headers: { 'Retry-After': '1' } });
      }
      const key = `${request.env}/${request.file}`;
      return new Promise<WaitOutcome>((resolve) => {
        const w = files.get(key) ?? start(key, request);
        waiting++;
        const waiter: Waiter = {
          known,
          done(outcome) {
            if (!w.waiters.delete(waiter)) return;
            waiting--;
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            if (w.waiters.size === 0) stop(key, w);
            resolve(outcome);
          },
        };
        const onAbort = () => waiter.done({ kind: 'cancelled' });
        w.waiters.add(waiter);
        const timer = setTimeout(() => waiter.done({ kind: 'timeout' }), ms);
        signal.addEventListener('abort', onAbort, { once: true });
        if (signal.aborted) onAbort();
        // The watcher already knows a newer version than the one this client holds.
        else if (w.current !== undefined && w.current !== known) schedule(w);
      });
    },
    close() {
      closed = true;
      for (const w of [...files.values()]) for (const waiter of [...w.waiters]) waiter.done({ kind: 'closed' });
    },
    get stats() {
      return { files: files.size, waiting };
    },
  };
}

/** The folders and files a watch of `r` looks at. */
function pathsOf(storageDir: string, r: FileRequest): { envDir: string; filePath: string; fileDir: string; envFile: string } {
  const envDir = join(storageDir, r.env);
  const filePath = join(envDir, r.file);
  return { envDir, filePath, fileDir: dirname(filePath), envFile: join(envDir, '.env') };
}

/** What `stat` says of the file and its environment's `.env` (`absent` for one that is not there). */
async function stampsIn(storageDir: string, r: FileRequest): Promise<string> {
  const { filePath, envFile } = pathsOf(storageDir, r);
  const one = async (p: string) => {
    try {
      const s = await stat(p);
      return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
    } catch {
      return 'absent';
    }
  };
  return `${await one(filePath)}|${await one(envFile)}`;
}
