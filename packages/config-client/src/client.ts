import { nobleBackend, nodeBackend, openFromBase64, parseKey, type AeadBackend } from '@repo/crypto';
import { CLIENT_ERROR_CODES, ConfigClientError } from './errors';
import { httpsGet, type TrustOptions } from './transport';

/** The client library version (spec 000, "Versioning"). */
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

/** The config server client. */
export interface ConfigClient {
  /** GETs `<env>/<file>` and returns the sealed base64 body as sent. */
  fetchSealed(env: string, file: string): Promise<{ body: string; headers: FetchedFile['headers'] }>;
  /** GETs `<env>/<file>` and opens it with the environment key (32 bytes, or 64 hex characters). */
  fetchFile(env: string, file: string, key: Uint8Array | string): Promise<FetchedFile>;
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

  async function fetchSealed(env: string, file: string) {
    const path = `/${encodeURIComponent(env)}/${file.split('/').map(encodeURIComponent).join('/')}`;
    const res = await httpsGet(new URL(path, base), headers, options, timeoutMs);
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
  };
}

function parseFileName(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const star = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (star) return decodeURIComponent(star[1]!);
  return /filename="([^"]*)"/i.exec(header)?.[1];
}
