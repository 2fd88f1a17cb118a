import {
  base64ToBytes,
  nobleBackend,
  nodeBackend,
  openFromBase64,
  parseKey,
  type AeadBackend,
  type HpkeKemName,
  type HpkeSuite,
} from '@repo/crypto';
import { clientSuite, formatClientPublicKey, type ClientKeyPair } from './client-key';
import { CLIENT_ERROR_CODES, ConfigClientError } from './errors';
import { httpsGet, type TrustOptions } from './transport';

/** The client library version (docs/config-server.md, "Versioning"). */
export const CLIENT_VERSION = '1.0.0';
/** The API version this client speaks. */
export const API_VERSION = '1.0.0';

/** Options of {@link createConfigClient}. */
export interface ConfigClientOptions extends TrustOptions {
  /** `https://host:6666` */
  baseUrl: string;
  /** Per request, ms (default 30 000, the server's own limit). */
  timeoutMs?: number;
  /** `node` (OpenSSL) or `noble` (pure JS, for runtimes without node:crypto). */
  backend?: 'node' | 'noble';
}

/** A fetched and opened file. */
export interface FetchedFile {
  content: Uint8Array;
  /** From `Content-Disposition`. */
  fileName: string | undefined;
  /** `X-Config-Version`: names this rendering of the file (config-server README, "Versions"). */
  version: string | undefined;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * How a file is opened: the environment key (32 bytes, or 64 hex characters), or the client's
 * own key pair (recipient mode: the server seals to its public key, which must be registered).
 */
export type FileKey = Uint8Array | string | ClientKeyPair;

/** Options of a fetch. */
export interface FetchOptions {
  /** Pin a version (`?version=`): an earlier one the server keeps, sealed afresh. */
  version?: string;
}

/** Options of {@link ConfigClient.fetchIfChanged}. */
export interface ConditionalFetchOptions {
  /** The version the caller holds (`If-None-Match`); without it the file is always fetched. */
  since?: string;
  /** Hold the request up to this many seconds until the version changes (`?wait=`; at most the server's request timeout). */
  waitSeconds?: number;
  /** Abandons the request. */
  signal?: AbortSignal;
}

/** Options of {@link ConfigClient.watchFile}. */
export interface WatchOptions {
  /** Each request waits up to this long (s, default 25, under the server's default 30 s request timeout). */
  waitSeconds?: number;
  /** Start from this version: the first file yielded is the next one (default: the current file first). */
  since?: string;
  /** Stops the watch (the iterator ends). */
  signal?: AbortSignal;
  /** Called before each retry after a failure that may pass (network, 408, 429, 5xx); default: silent. */
  onRetry?: (error: ConfigClientError, delayMs: number) => void;
}

/** `X-Encryption-Mode` the server answers for each KEM of the recipient mode. */
export const RECIPIENT_MODES: Readonly<Record<HpkeKemName, string>> = { X25519: 'hpke-x25519', 'X-Wing': 'hpke-xwing' };

/** The HPKE `info` the server binds a file to (docs/config-server.md, "Recipient mode"). */
export function recipientInfo(env: string, file: string): Uint8Array {
  return new TextEncoder().encode(`config-server/v1/file/${env}/${file}`);
}

/** The config server client. */
export interface ConfigClient {
  /** GETs `<env>/<file>` and returns the sealed base64 body as sent (`extraHeaders` added to the request). */
  fetchSealed(
    env: string,
    file: string,
    extraHeaders?: Record<string, string>,
    options?: FetchOptions,
  ): Promise<{ body: string; headers: FetchedFile['headers'] }>;
  /** GETs `<env>/<file>` (or a pinned `version`) and opens it with the environment key (32 bytes, or 64 hex characters). */
  fetchFile(env: string, file: string, key: Uint8Array | string, options?: FetchOptions): Promise<FetchedFile>;
  /**
   * GETs `<env>/<file>` sealed to the client's own key (recipient mode: `X-Client-Public-Key`,
   * `X-Client-Kem`) and opens it with the private key. The public key must be registered for
   * `env` on the server, else HTTP_ERROR 403 `ACCESS_DENIED`.
   */
  fetchFileWithPrivateKey(env: string, file: string, key: ClientKeyPair, options?: FetchOptions): Promise<FetchedFile>;
  /**
   * Conditional fetch: undefined when the server's version is still `since` (304), else the file
   * opened with `key`. With `waitSeconds`, the server holds the request until the version changes
   * or the wait ends (then undefined).
   */
  fetchIfChanged(env: string, file: string, key: FileKey, options?: ConditionalFetchOptions): Promise<FetchedFile | undefined>;
  /**
   * Yields the file now (unless `since` is given), then each time its version changes, from a
   * chain of waiting requests. Failures that may pass are retried with a growing delay (1 s to
   * 30 s); others (403, 404, a wrong key) end the iteration by throwing.
   */
  watchFile(env: string, file: string, key: FileKey, options?: WatchOptions): AsyncGenerator<FetchedFile>;
}

/** Creates a client; verification of the server certificate is always on. */
export function createConfigClient(options: ConfigClientOptions): ConfigClient {
  let base: URL;
  try {
    base = new URL(options.baseUrl);
  } catch (cause) {
    throw new ConfigClientError(CLIENT_ERROR_CODES.INVALID_ARGUMENT, '"baseUrl" expected an https:// URL', { cause });
  }
  const state: ClientState = {
    options,
    base,
    backend: options.backend === 'noble' ? nobleBackend : nodeBackend,
    timeoutMs: options.timeoutMs ?? 30_000,
    headers: {
      Accept: 'application/json, application/octet-stream',
      'User-Agent': `config-client/${CLIENT_VERSION}`,
      'API-Version': API_VERSION,
    },
    suites: new Map(),
  };
  return {
    fetchSealed: (env, file, extraHeaders, fetchOptions) => fetchSealed(state, env, file, extraHeaders, fetchOptions),
    fetchFile: async (env, file, key, fetchOptions) => fetchWith(state, env, file, environmentKey(key), fetchOptions),
    fetchFileWithPrivateKey: async (env, file, key, fetchOptions) => fetchWith(state, env, file, key, fetchOptions),
    fetchIfChanged: (env, file, key, conditional) => fetchIfChanged(state, env, file, key, conditional),
    watchFile: (env, file, key, watch) => watchFile(state, env, file, key, watch),
  };
}

/** What a client holds: its options, the server's URL, the AEAD backend, its request headers and HPKE suites. */
interface ClientState {
  readonly options: ConfigClientOptions;
  readonly base: URL;
  readonly backend: AeadBackend;
  readonly timeoutMs: number;
  readonly headers: Record<string, string>;
  readonly suites: Map<HpkeKemName, HpkeSuite>;
}

/** The client's HPKE suite for a KEM, made once. */
function suiteFor(state: ClientState, kem: HpkeKemName): HpkeSuite {
  let suite = state.suites.get(kem);
  if (suite === undefined) state.suites.set(kem, (suite = clientSuite(kem, state.options.backend)));
  return suite;
}

function pathOf(env: string, file: string, query: Record<string, string>): string {
  const path = `/${encodeURIComponent(env)}/${file.split('/').map(encodeURIComponent).join('/')}`;
  const search = new URLSearchParams(query).toString();
  return search === '' ? path : `${path}?${search}`;
}

/** GETs the file; 200 and 304 are answers, anything else an HTTP_ERROR. */
async function getFile(
  state: ClientState,
  env: string,
  file: string,
  extraHeaders: Record<string, string>,
  query: Record<string, string>,
  waitMs = 0,
  signal?: AbortSignal,
): Promise<{ status: 200 | 304; body: string; headers: FetchedFile['headers'] }> {
  const url = new URL(pathOf(env, file, query), state.base);
  const res = await httpsGet(url, { ...state.headers, ...extraHeaders }, state.options, state.timeoutMs + waitMs, signal);
  if (res.status === 200 || res.status === 304) return { status: res.status, body: res.body.toString('ascii'), headers: res.headers };
  let serverError: ConfigClientError['serverError'];
  try {
    serverError = JSON.parse(res.body.toString('utf8')) as ConfigClientError['serverError'];
  } catch {
    serverError = undefined;
  }
  throw new ConfigClientError(CLIENT_ERROR_CODES.HTTP_ERROR, `server answered ${res.status}: ${serverError?.error ?? 'no error record'}`, {
    status: res.status,
    serverError,
  });
}

async function fetchSealed(
  state: ClientState,
  env: string,
  file: string,
  extraHeaders: Record<string, string> = {},
  fetchOptions: FetchOptions = {},
) {
  const query: Record<string, string> = fetchOptions.version !== undefined ? { version: fetchOptions.version } : {};
  const res = await getFile(state, env, file, extraHeaders, query);
  if (res.status !== 200) {
    throw new ConfigClientError(CLIENT_ERROR_CODES.HTTP_ERROR, `server answered ${res.status} to an unconditional request`, {
      status: res.status,
    });
  }
  return { body: res.body, headers: res.headers };
}

function environmentKey(key: Uint8Array | string): Uint8Array {
  try {
    return typeof key === 'string' ? parseKey(key, 'key') : key;
  } catch (cause) {
    throw new ConfigClientError(CLIENT_ERROR_CODES.INVALID_ARGUMENT, (cause as Error).message, { cause });
  }
}

const isKeyPair = (key: FileKey): key is ClientKeyPair => typeof key === 'object' && !(key instanceof Uint8Array);

/** How to ask for a file and open it: the request headers `key` asks for, and the opening. */
interface Opener {
  headers: Record<string, string>;
  open(body: string, headers: FetchedFile['headers']): FetchedFile;
}

/** The request headers `key` asks for (recipient mode), and how to open what comes back. */
function opener(state: ClientState, env: string, file: string, key: FileKey): Opener {
  return isKeyPair(key) ? keyPairOpener(state, env, file, key) : environmentKeyOpener(state, environmentKey(key));
}

/** A file sealed under the environment's key (the spec's pre-shared-key mode). */
function environmentKeyOpener(state: ClientState, keyBytes: Uint8Array): Opener {
  return {
    headers: {},
    open(body, responseHeaders) {
      let content: Uint8Array;
      try {
        content = openFromBase64(keyBytes, body, { backend: state.backend });
      } catch (cause) {
        throw new ConfigClientError(
          CLIENT_ERROR_CODES.DECRYPT_FAILED,
          'the file does not open with this key (wrong key, or the body was altered)',
          {
            cause,
          },
        );
      }
      return fetched(content, responseHeaders);
    },
  };
}

/** A file sealed with HPKE to the client's own registered key (recipient mode). */
function keyPairOpener(state: ClientState, env: string, file: string, key: ClientKeyPair): Opener {
  const suite = suiteFor(state, key.kem);
  return {
    headers: { 'X-Client-Kem': key.kem, 'X-Client-Public-Key': formatClientPublicKey(key) },
    open(body, responseHeaders) {
      const mode = responseHeaders['x-encryption-mode'];
      if (mode !== RECIPIENT_MODES[key.kem]) {
        throw new ConfigClientError(
          CLIENT_ERROR_CODES.DECRYPT_FAILED,
          `the server did not seal the file to this key (X-Encryption-Mode: ${String(mode ?? 'absent')}, expected ${RECIPIENT_MODES[key.kem]})`,
        );
      }
      let content: Uint8Array;
      try {
        content = suite.openBytes(key.privateKey, base64ToBytes(body, 'body'), { info: recipientInfo(env, file) });
      } catch (cause) {
        throw new ConfigClientError(
          CLIENT_ERROR_CODES.DECRYPT_FAILED,
          'the file does not open with this private key (another key, or the body was altered)',
          { cause },
        );
      }
      return fetched(content, responseHeaders);
    },
  };
}

async function fetchWith(
  state: ClientState,
  env: string,
  file: string,
  key: FileKey,
  fetchOptions: FetchOptions = {},
): Promise<FetchedFile> {
  const how = opener(state, env, file, key);
  const { body, headers: responseHeaders } = await fetchSealed(state, env, file, how.headers, fetchOptions);
  return how.open(body, responseHeaders);
}

async function fetchIfChanged(
  state: ClientState,
  env: string,
  file: string,
  key: FileKey,
  conditional: ConditionalFetchOptions = {},
): Promise<FetchedFile | undefined> {
  const how = opener(state, env, file, key);
  const waitSeconds = conditional.waitSeconds ?? 0;
  if (!Number.isFinite(waitSeconds) || waitSeconds < 0) {
    throw new ConfigClientError(CLIENT_ERROR_CODES.INVALID_ARGUMENT, '"waitSeconds" expected a number of seconds, 0 or more');
  }
  const extra = { ...how.headers, ...(conditional.since !== undefined ? { 'If-None-Match': `"${conditional.since}"` } : {}) };
  const query: Record<string, string> = waitSeconds > 0 ? { wait: String(Math.round(waitSeconds * 1000) / 1000) } : {};
  const res = await getFile(state, env, file, extra, query, waitSeconds * 1000, conditional.signal);
  if (res.status === 304) return undefined;
  return how.open(res.body, res.headers);
}

async function* watchFile(
  state: ClientState,
  env: string,
  file: string,
  key: FileKey,
  watch: WatchOptions = {},
): AsyncGenerator<FetchedFile> {
  const waitSeconds = watch.waitSeconds ?? 25;
  let since = watch.since;
  let delay = 0;
  const stopped = (): boolean => watch.signal?.aborted === true;
  while (!stopped()) {
    let next: FetchedFile | undefined;
    try {
      next = await fetchIfChanged(state, env, file, key, {
        since,
        waitSeconds: since === undefined ? 0 : waitSeconds,
        signal: watch.signal,
      });
      delay = 0;
    } catch (err) {
      if (stopped()) return;
      if (!(err instanceof ConfigClientError) || !retryable(err)) throw err;
      delay = Math.min(30_000, Math.max(1_000, delay * 2));
      watch.onRetry?.(err, delay);
      await sleep(delay, watch.signal);
      continue;
    }
    if (next === undefined) continue;
    since = next.version;
    yield next;
  }
}

function fetched(content: Uint8Array, headers: FetchedFile['headers']): FetchedFile {
  const version = headers['x-config-version'];
  return {
    content,
    fileName: parseFileName(headers['content-disposition']),
    version: typeof version === 'string' ? version : undefined,
    headers,
  };
}

/** Failures a later attempt may not meet: the network, and 408, 429 and 5xx answers. */
function retryable(err: ConfigClientError): boolean {
  if (err.code === CLIENT_ERROR_CODES.NETWORK) return true;
  const status = err.status ?? 0;
  return err.code === CLIENT_ERROR_CODES.HTTP_ERROR && (status === 408 || status === 429 || status >= 500);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

function parseFileName(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const star = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (star) return decodeURIComponent(star[1]!);
  return /filename="([^"]*)"/i.exec(header)?.[1];
}
