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
  headers: Record<string, string | string[] | undefined>;
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
  fetchSealed(env: string, file: string, extraHeaders?: Record<string, string>): Promise<{ body: string; headers: FetchedFile['headers'] }>;
  /** GETs `<env>/<file>` and opens it with the environment key (32 bytes, or 64 hex characters). */
  fetchFile(env: string, file: string, key: Uint8Array | string): Promise<FetchedFile>;
  /**
   * GETs `<env>/<file>` sealed to the client's own key (recipient mode: `X-Client-Public-Key`,
   * `X-Client-Kem`) and opens it with the private key. The public key must be registered for
   * `env` on the server, else HTTP_ERROR 403 `ACCESS_DENIED`.
   */
  fetchFileWithPrivateKey(env: string, file: string, key: ClientKeyPair): Promise<FetchedFile>;
}

/** Creates a client; verification of the server certificate is always on. */
export function createConfigClient(options: ConfigClientOptions): ConfigClient {
  let base: URL;
  try {
    base = new URL(options.baseUrl);
  } catch (cause) {
    throw new ConfigClientError(CLIENT_ERROR_CODES.INVALID_ARGUMENT, '"baseUrl" expected an https:// URL', { cause });
  }
  const backend: AeadBackend = options.backend === 'noble' ? nobleBackend : nodeBackend;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const headers = {
    Accept: 'application/json, application/octet-stream',
    'User-Agent': `config-client/${CLIENT_VERSION}`,
    'API-Version': API_VERSION,
  };

  const suites = new Map<HpkeKemName, HpkeSuite>();
  const suiteFor = (kem: HpkeKemName): HpkeSuite => {
    let suite = suites.get(kem);
    if (suite === undefined) suites.set(kem, (suite = clientSuite(kem, options.backend)));
    return suite;
  };

  async function fetchSealed(env: string, file: string, extraHeaders: Record<string, string> = {}) {
    const path = `/${encodeURIComponent(env)}/${file.split('/').map(encodeURIComponent).join('/')}`;
    const res = await httpsGet(new URL(path, base), { ...headers, ...extraHeaders }, options, timeoutMs);
    if (res.status !== 200) {
      let serverError: ConfigClientError['serverError'];
      try {
        serverError = JSON.parse(res.body.toString('utf8')) as ConfigClientError['serverError'];
      } catch {
        serverError = undefined;
      }
      throw new ConfigClientError(
        CLIENT_ERROR_CODES.HTTP_ERROR,
        `server answered ${res.status}: ${serverError?.error ?? 'no error record'}`,
        {
          status: res.status,
          serverError,
        },
      );
    }
    return { body: res.body.toString('ascii'), headers: res.headers };
  }

  return {
    fetchSealed,
    async fetchFile(env, file, key) {
      let keyBytes: Uint8Array;
      try {
        keyBytes = typeof key === 'string' ? parseKey(key, 'key') : key;
      } catch (cause) {
        throw new ConfigClientError(CLIENT_ERROR_CODES.INVALID_ARGUMENT, (cause as Error).message, { cause });
      }
      const { body, headers: responseHeaders } = await fetchSealed(env, file);
      let content: Uint8Array;
      try {
        content = openFromBase64(keyBytes, body, { backend });
      } catch (cause) {
        throw new ConfigClientError(
          CLIENT_ERROR_CODES.DECRYPT_FAILED,
          'the file does not open with this key (wrong key, or the body was altered)',
          { cause },
        );
      }
      return { content, fileName: parseFileName(responseHeaders['content-disposition']), headers: responseHeaders };
    },
    async fetchFileWithPrivateKey(env, file, key) {
      const suite = suiteFor(key.kem);
      const { body, headers: responseHeaders } = await fetchSealed(env, file, {
        'X-Client-Kem': key.kem,
        'X-Client-Public-Key': formatClientPublicKey(key),
      });
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
      return { content, fileName: parseFileName(responseHeaders['content-disposition']), headers: responseHeaders };
    },
  };
}

function parseFileName(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const star = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (star) return decodeURIComponent(star[1]!);
  return /filename="([^"]*)"/i.exec(header)?.[1];
}
