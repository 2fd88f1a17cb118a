import type { RequestHandler } from 'express';
import { bytesToBase64, nodeBackend, sealToBase64, type HpkeKemName, type HpkeSuite } from '@repo/crypto';
import { AppError } from '@repo/errors';
import type { Logger } from '@repo/http';
import type { ClientKeyRegistry } from '../client-keys';
import type { Keyring } from '../keyring';
import type { FileStore } from '../file-store';
import { parseFileRequest } from '../file-path';
import { createRecipientSuites, ENCRYPTION_MODES, parseRecipientHeaders, recipientInfo } from '../recipient';

/** Options of {@link fileRoute}. */
export interface FileRouteOptions {
  store: FileStore;
  keyring: Keyring;
  clientKeys: ClientKeyRegistry;
  logger: Logger;
}

/**
 * `GET /<env>/<file>`: the file, substituted, sealed under the environment's key, base64
 * (docs/config-server.md, "GET /<env>/<file>"). The raw path is parsed here rather than by the router,
 * so that every encoded spelling of a traversal is seen before anything decodes it.
 *
 * Recipient mode (docs/config-server.md, "Recipient mode"): with `X-Client-Public-Key` and `X-Client-Kem`, the file is
 * sealed with HPKE (RFC 9180, base mode) to that key instead, body `Base64(enc || ciphertext ||
 * tag)`. The headers are checked and the key looked up among the environment's registered keys
 * before the file is touched, so a refusal says nothing about the file.
 */
export function fileRoute(options: FileRouteOptions): RequestHandler {
  const suites: Record<HpkeKemName, HpkeSuite> = createRecipientSuites();
  return async function fileRoute(req, res, next) {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      next();
      return;
    }
    const rawPath = req.originalUrl.split('?', 1)[0]!;
    const request = parseFileRequest(rawPath);
    if (request === undefined) {
      next();
      return;
    }
    const recipient = parseRecipientHeaders(req.headers);
    const registered = recipient && options.clientKeys.find(request.env, recipient.kem, recipient.publicKey);
    // Anyone may send a key of their own: only keys registered for this environment are served.
    if (recipient !== undefined && registered === undefined) throw new AppError('ACCESS_DENIED');

    const rendered = await options.store.render(request);
    // The headers of this response go out in one writeHead (on top of the common ones already set).
    const headers: Record<string, string> = {
      'Content-Type': 'application/octet-stream',
      'Content-Disposition': contentDisposition(rendered.name),
      'Cache-Control': 'no-store',
      Vary: 'X-Client-Public-Key, X-Client-Kem',
    };
    let body: string;
    if (recipient === undefined) {
      const { key } = options.keyring.keyFor(request.env);
      body = sealToBase64(key, rendered.content, { backend: nodeBackend });
      headers['X-Encryption-Mode'] = ENCRYPTION_MODES.psk;
    } else {
      const suite = suites[recipient.kem];
      const sealed = suite.sealToBytes(recipient.publicKey, rendered.content, { info: recipientInfo(request.env, request.file) });
      body = bytesToBase64(sealed);
      headers['X-Encryption-Mode'] = ENCRYPTION_MODES[recipient.kem];
      headers['X-HPKE-Suite'] = suite.name;
      options.logger.debug({ env: request.env, client: registered!.name, fingerprint: registered!.fingerprint }, 'sealed to a client key');
    }
    headers['Content-Length'] = String(body.length); // base64 is ASCII: characters are bytes
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

/** `attachment; filename="…"` with an RFC 6266 / RFC 8187 `filename*` for non-ASCII names. */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  if (ascii === name) return `attachment; filename="${name}"`;
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
