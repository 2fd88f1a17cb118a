import type { RequestHandler } from 'express';
import { nodeBackend, sealToBase64 } from '@repo/crypto';
import type { Keyring } from '../keyring';
import type { FileStore } from '../file-store';
import { parseFileRequest } from '../file-path';

/** Options of {@link fileRoute}. */
export interface FileRouteOptions {
  store: FileStore;
  keyring: Keyring;
}

/**
 * `GET /<env>/<file>`: the file, substituted, sealed under the environment's key, base64
 * (spec 000, "Endpoints", rules 1 to 4). The raw path is parsed here rather than by the router,
 * so that every encoded spelling of a traversal is seen before anything decodes it.
 */
export function fileRoute(options: FileRouteOptions): RequestHandler {
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
    const rendered = await options.store.render(request);
    const { key } = options.keyring.keyFor(request.env);
    const body = sealToBase64(key, rendered.content, { backend: nodeBackend });
    res.status(200);
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('Content-Disposition', contentDisposition(rendered.name));
    res.setHeader('Content-Length', String(Buffer.byteLength(body)));
    res.setHeader('X-Encryption-Mode', 'psk');
    res.setHeader('Cache-Control', 'no-store');
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

/** `attachment; filename="…"` with an RFC 6266 / RFC 8187 `filename*` for non-ASCII names. */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  if (ascii === name) return `attachment; filename="${name}"`;
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
