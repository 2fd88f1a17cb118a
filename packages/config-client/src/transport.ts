import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { normalizeSha256Fingerprint } from '@repo/crypto';
import { CLIENT_ERROR_CODES, ConfigClientError } from './errors';

/** How the server's certificate is trusted. No option turns verification off. */
export interface TrustOptions {
  /** PEM CA certificate(s) to trust instead of the system store (a self-signed server certificate works). */
  ca?: string | Buffer;
  /** SHA-256 fingerprint of the server certificate (`AB:CD:…` or plain hex): the certificate must be exactly this one. */
  fingerprint?: string;
}

/** A response read whole. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Normalises a SHA-256 fingerprint to `AB:CD:…`; throws INVALID_ARGUMENT on anything else. */
export function normaliseFingerprint(text: string): string {
  const normalized = normalizeSha256Fingerprint(text);
  if (normalized === undefined) {
    throw new ConfigClientError(
      CLIENT_ERROR_CODES.INVALID_ARGUMENT,
      '"fingerprint" expected a SHA-256 fingerprint (64 hex characters, colons allowed)',
    );
  }
  return normalized;
}

/**
 * GETs `url` over TLS. With a fingerprint, the TLS handshake completes and the certificate is
 * compared before a single byte of the request is sent; otherwise the usual chain and host
 * name checks apply (with `ca` when given).
 */
export async function httpsGet(
  url: URL,
  headers: Record<string, string>,
  trust: TrustOptions,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<RawResponse> {
  if (url.protocol !== 'https:') {
    throw new ConfigClientError(CLIENT_ERROR_CODES.INVALID_ARGUMENT, 'the config server is reached over https:// only');
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 443);
  const pinned = trust.fingerprint === undefined ? undefined : normaliseFingerprint(trust.fingerprint);
  const socket = pinned === undefined ? undefined : await pinnedSocket(host, port, pinned, timeoutMs);

  return new Promise<RawResponse>((resolve, reject) => {
    const req = httpsRequest(
      {
        host,
        port,
        path: url.pathname + url.search,
        method: 'GET',
        headers,
        ca: trust.ca,
        servername: isIp(host) ? undefined : host,
        timeout: timeoutMs,
        // One connection per request; a pinned one is handed over already verified (an agent
        // would ignore createConnection and open its own).
        ...(socket ? { createConnection: () => socket } : { agent: false }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', (cause) =>
          reject(new ConfigClientError(CLIENT_ERROR_CODES.NETWORK, 'connection lost while reading the answer', { cause })),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    if (signal !== undefined) {
      const onAbort = () => req.destroy(new Error('aborted'));
      if (signal.aborted) onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      req.once('close', () => signal.removeEventListener('abort', onAbort));
    }
    req.on('error', (cause) => {
      socket?.destroy();
      reject(classify(cause));
    });
    req.end();
  });
}

function pinnedSocket(host: string, port: number, pinned: string, timeoutMs: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    // The chain is not checked here; the exact certificate is, which is stronger than any chain.
    const socket = tlsConnect({
      host,
      port,
      servername: isIp(host) ? undefined : host,
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
    });
    const timer = setTimeout(() => socket.destroy(new Error('timeout')), timeoutMs);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      const actual = socket.getPeerCertificate().fingerprint256;
      if (actual !== pinned) {
        socket.destroy();
        reject(
          new ConfigClientError(
            CLIENT_ERROR_CODES.TLS_UNTRUSTED,
            `server certificate fingerprint ${actual} does not match the pinned ${pinned}`,
          ),
        );
        return;
      }
      resolve(socket);
    });
    socket.once('error', (cause) => {
      clearTimeout(timer);
      reject(classify(cause));
    });
  });
}

function classify(cause: unknown): ConfigClientError {
  if (cause instanceof ConfigClientError) return cause;
  const code = (cause as NodeJS.ErrnoException).code ?? '';
  if (/CERT|SELF_SIGNED|UNABLE_TO|ERR_TLS/.test(code)) {
    return new ConfigClientError(
      CLIENT_ERROR_CODES.TLS_UNTRUSTED,
      `server certificate not trusted (${code}): pass its CA or pin its fingerprint`,
      { cause },
    );
  }
  return new ConfigClientError(CLIENT_ERROR_CODES.NETWORK, `cannot reach the config server (${code || (cause as Error).message})`, {
    cause,
  });
}

function isIp(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}
