import type { RequestHandler, Response } from 'express';
import { bytesToBase64, nodeBackend, sealToBase64, type HpkeKemName, type HpkeSuite } from '@repo/crypto';
import { AppError } from '@repo/errors';
import type { Logger } from '@repo/service';
import type { AuditFields } from '../audit';
import { clientKeyFingerprint, type ClientKeyRegistry } from '../client-keys';
import type { Keyring } from '../keyring';
import type { FileStore } from '../file-store';
import { fileRequestOf } from '../file-path';
import { parseFileQuery, parseIfNoneMatch } from '../file-query';
import { createRecipientSuites, ENCRYPTION_MODES, parseRecipientHeaders, recipientInfo } from '../recipient';
import type { VersionStore } from '../versions';
import type { WatchHub } from '../watch';

/** What {@link createFileRouter} needs. */
export interface FileRouterDeps {
  store: FileStore;
  keyring: Keyring;
  clientKeys: ClientKeyRegistry;
  versions: VersionStore;
  watch: WatchHub;
  /** The longest `?wait=` accepted (s): the request timeout. */
  maxWaitSeconds: number;
  logger: Logger;
}

/** Response header carrying the version of the file served (also the `ETag`, quoted). */
export const VERSION_HEADER = 'X-Config-Version';

/**
 * `GET /<env>/<file>`: the file, substituted, sealed under the environment's key, base64
 * (docs/config-server.md, "GET /<env>/<file>"). The raw path is parsed here rather than by the router,
 * so that every encoded spelling of a traversal is seen before anything decodes it.
 *
 * Recipient mode (docs/config-server.md, "Recipient mode"): with `X-Client-Public-Key` and
 * `X-Client-Kem`, the file is sealed with HPKE (RFC 9180, base mode) to that key instead, body
 * `Base64(enc || ciphertext || tag)`. The headers are checked and the key looked up among the
 * environment's registered keys before the file is touched, so a refusal says nothing about the file.
 *
 * Versions (docs/config-server.md, "Versions"): every answer carries `X-Config-Version` and the
 * same value as a strong `ETag`; `If-None-Match` naming it is 304 (RFC 9110, section 13.1.2);
 * `?version=` serves a kept earlier version, sealed afresh; `?wait=` holds a conditional request
 * until the version changes.
 */
export function createFileRouter(options: FileRouterDeps): RequestHandler {
  const suites: Record<HpkeKemName, HpkeSuite> = createRecipientSuites();
  const { versions } = options;

  return async function fileRoute(req, res, next) {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      next();
      return;
    }
    const request = fileRequestOf(req, res);
    if (request === undefined) {
      next();
      return;
    }
    res.locals.route = '/:env/:file';
    const audit = (res.locals.audit ?? {}) as AuditFields;
    const query = parseFileQuery(req, options.maxWaitSeconds);
    if (query.version !== undefined) audit.requested = query.version;
    const recipient = parseRecipientHeaders(req.headers);
    const registered = recipient && options.clientKeys.find(request.env, recipient.kem, recipient.publicKey);
    if (recipient !== undefined) {
      audit.mode = ENCRYPTION_MODES[recipient.kem];
      audit.fingerprint = registered?.fingerprint ?? clientKeyFingerprint(recipient.publicKey);
      audit.client = registered?.name ?? null;
    }
    // Anyone may send a key of their own: only keys registered for this environment are served.
    if (recipient !== undefined && registered === undefined) throw new AppError('ACCESS_DENIED');

    // For config_fetches_total, counted only when the answer is 200 or 304 (the environment exists).
    res.locals.configFetch = {
      environment: request.env,
      mode: recipient === undefined ? ENCRYPTION_MODES.psk : ENCRYPTION_MODES[recipient.kem],
    };
    const conditional = parseIfNoneMatch(req.headers['if-none-match']);
    // A request that may wait reads the disk: a cached rendering could already be out of date.
    const rendered = await options.store.render(request, { fresh: query.waitMs > 0 });
    let content = rendered.content;
    let version = versions.versionOf(request.env, request.file, content);
    await versions.record(request.env, request.file, version, content);

    if (query.version !== undefined && query.version !== version) {
      const kept = await versions.load(request.env, request.file, query.version);
      if (kept === undefined) {
        throw new AppError('VERSION_NOT_FOUND', {
          message: `version not found: ${request.env}/${request.file}`,
          details: 'unknown version, or no longer kept',
        });
      }
      content = kept;
      version = query.version;
    }

    if (conditional !== undefined && (conditional === '*' || conditional.includes(version))) {
      if (query.waitMs === 0) {
        audit.version = version;
        notModified(res, version);
        return;
      }
      const started = Date.now();
      const abort = new AbortController();
      const onClose = () => abort.abort();
      res.once('close', onClose);
      // A client that went away while the file was rendered is not waited for: its `close` has been
      // and gone, and the wait would hold a `MAX_WAITING` slot and a watcher for nobody.
      if (res.destroyed) abort.abort();
      const outcome = await options.watch.waitForChange(request, version, query.waitMs, abort.signal);
      res.off('close', onClose);
      audit.waitedMs = Date.now() - started;
      if (outcome.kind === 'cancelled') return; // the client went away
      if (outcome.kind === 'failed') throw outcome.error; // deleted while waited on: 404, and so on
      if (outcome.kind !== 'changed') {
        // Waited the whole time (or the server is stopping): nothing changed.
        audit.version = version;
        if (outcome.kind === 'closed') res.setHeader('Connection', 'close');
        notModified(res, version);
        return;
      }
      // The key may have been revoked while the request waited.
      if (recipient !== undefined && options.clientKeys.find(request.env, recipient.kem, recipient.publicKey) === undefined) {
        throw new AppError('ACCESS_DENIED');
      }
      content = outcome.file.file.content;
      version = outcome.file.version;
      await versions.record(request.env, request.file, version, content);
    }

    let body: string;
    let mode: string;
    let suiteName: string | undefined;
    if (recipient === undefined) {
      const { key } = options.keyring.keyFor(request.env);
      body = sealToBase64(key, content, { backend: nodeBackend });
      mode = ENCRYPTION_MODES.psk;
    } else {
      const suite = suites[recipient.kem];
      const sealed = suite.sealToBytes(recipient.publicKey, content, { info: recipientInfo(request.env, request.file) });
      body = bytesToBase64(sealed);
      mode = ENCRYPTION_MODES[recipient.kem];
      suiteName = suite.name;
    }
    // The headers of this response go out in one writeHead (on top of the common ones already set).
    const headers = answerHeaders(content, { version, name: rendered.name, mode, suite: suiteName, length: body.length });
    audit.version = version;
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : body, 'latin1'); // base64: one byte per character
  };
}

/** What the headers of a 200 depend on. */
interface AnswerShape {
  version: string;
  /** The file's name, for `Content-Disposition`. */
  name: string;
  /** `X-Encryption-Mode` */
  mode: string;
  /** `X-HPKE-Suite`, in the recipient modes. */
  suite: string | undefined;
  /** Of the body: base64 is ASCII, characters are bytes. */
  length: number;
}

type ShapedHeaders = { shape: AnswerShape; headers: Record<string, string> };
const sameShape = (a: AnswerShape, b: AnswerShape) =>
  a.version === b.version && a.name === b.name && a.mode === b.mode && a.suite === b.suite && a.length === b.length;
/** Per rendering (its bytes; dropped with them), the headers of its last answer in each mode. */
const headerCache = new WeakMap<Buffer, Map<string, ShapedHeaders>>();

/**
 * The headers of a 200: the same for every answer of one rendering in one mode, so they are built
 * once per rendering and mode rather than for each answer, and rebuilt when anything they name differs.
 */
function answerHeaders(content: Buffer, shape: AnswerShape): Record<string, string> {
  let byMode = headerCache.get(content);
  if (byMode === undefined) headerCache.set(content, (byMode = new Map()));
  const kept = byMode.get(shape.mode);
  if (kept !== undefined && sameShape(kept.shape, shape)) return kept.headers;
  const headers: Record<string, string> = {
    'Content-Type': 'application/octet-stream',
    'Content-Disposition': contentDisposition(shape.name),
    ...versionHeaders(shape.version),
    'X-Encryption-Mode': shape.mode,
    ...(shape.suite !== undefined ? { 'X-HPKE-Suite': shape.suite } : {}),
    'Content-Length': String(shape.length),
  };
  byMode.set(shape.mode, { shape, headers });
  return headers;
}

/** The headers every answer about a version carries, 200 and 304 alike. */
function versionHeaders(version: string): Record<string, string> {
  return {
    [VERSION_HEADER]: version,
    // Strong: the version names the plaintext exactly (the sealed bytes differ on every answer, but
    // no range request is served, and the client compares what it opened).
    ETag: `"${version}"`,
    'Cache-Control': 'no-store',
    Vary: 'X-Client-Public-Key, X-Client-Kem',
  };
}

function notModified(res: Response, version: string): void {
  res.writeHead(304, versionHeaders(version));
  res.end();
}

/** `attachment; filename="…"` with an RFC 6266 / RFC 8187 `filename*` for non-ASCII names. */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  if (ascii === name) return `attachment; filename="${name}"`;
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
