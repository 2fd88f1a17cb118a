import { AppError } from '@repo/errors';

/** docs/config-server.md, "GET /<env>/<file>": `env` is 1 to 50 letters, digits and hyphens. */
export const ENV_RE = /^[A-Za-z0-9-]{1,50}$/;
/** docs/config-server.md, "GET /<env>/<file>": `file` is 1 to 255 characters. */
export const MAX_FILE_PARAM_LENGTH = 255;

/** A request path split into its two parameters, decoded and checked. */
export interface FileRequest {
  env: string;
  /** Relative path below `storage/<env>/`, `/`-separated. */
  file: string;
}

const DENIED = () => new AppError('ACCESS_DENIED');

/**
 * {@link parseFileRequest} of a request's raw path (query string cut off), parsed once per request
 * and kept in `res.locals`: the audit trail and the route both ask. Throws what the parse threw, each time.
 */
export function fileRequestOf(req: { originalUrl: string }, res: { locals: Record<string, unknown> }): FileRequest | undefined {
  let entry = res.locals.fileRequest as { request: FileRequest | undefined } | { error: unknown } | undefined;
  if (entry === undefined) {
    try {
      entry = { request: parseFileRequest(req.originalUrl.split('?', 1)[0]!) };
    } catch (error) {
      entry = { error };
    }
    res.locals.fileRequest = entry;
  }
  if ('error' in entry) throw entry.error;
  return entry.request;
}

/**
 * Parses the raw path of `GET /<env>/<file>` (still percent-encoded, as it came off the wire).
 * Path traversal in any spelling is 403 `ACCESS_DENIED` (docs/config-server.md, "Path rules"):
 * `..` segments, absolute paths, backslashes, NUL and control characters, and the encoded and
 * double-encoded forms of each (`%2e%2e`, `%2f`, `%5c`, `%00`, `%252e`, …). Dotfiles (`.env`,
 * keys) are reported as not found, as if absent. Missing parameters are 400 `MISSING_PARAMETER`.
 * Returns undefined for a one-segment path, which is not this endpoint.
 */
export function parseFileRequest(rawPath: string): FileRequest | undefined {
  const slash = rawPath.indexOf('/', 1);
  if (slash === -1) return undefined; // one segment: not this endpoint (unknown endpoints are 404)
  const rawEnv = rawPath.slice(1, slash);
  const rawFile = rawPath.slice(slash + 1);

  // Every decoding layer a client or a proxy could apply is checked, so double encoding hides nothing.
  for (const layer of decodingLayers(rawPath)) {
    // eslint-disable-next-line no-control-regex -- control characters in a path are what this refuses
    if (/[\\\u0000-\u001f\u007f]/.test(layer)) throw DENIED();
    if (layer.split('/').some((segment) => segment === '..')) throw DENIED();
  }
  // An encoded slash would let a segment check be dodged: nobody needs one.
  if (/%2f/i.test(rawPath)) throw DENIED();

  const env = decodeOnce(rawEnv);
  const file = decodeOnce(rawFile);
  if (env === '') throw new AppError('MISSING_PARAMETER', { message: 'missing parameter: env' });
  if (file === '') throw new AppError('MISSING_PARAMETER', { message: 'missing parameter: file' });
  // Absolute paths: a leading slash (`//etc/passwd`), a drive letter, a UNC prefix.
  if (file.startsWith('/') || /^[A-Za-z]:/.test(file)) throw DENIED();
  if (!ENV_RE.test(env)) {
    throw new AppError('INVALID_PARAMETER', { message: 'invalid parameter: env', details: '1 to 50 letters, digits or hyphens' });
  }
  if (file.length > MAX_FILE_PARAM_LENGTH) {
    throw new AppError('INVALID_PARAMETER', { message: 'invalid parameter: file', details: `at most ${MAX_FILE_PARAM_LENGTH} characters` });
  }
  const segments = file.split('/');
  if (segments.some((s) => s === '' || s === '.')) throw DENIED();
  // Dotfiles (.env, key files) are never served: 404 as if absent (docs/config-server.md, "Path rules").
  if (segments.some((s) => s.startsWith('.'))) throw fileNotFound(env, file);
  return { env, file };
}

/** The 404 of docs/config-server.md, "Errors": `file not found: <env>/<file>`. */
export function fileNotFound(env: string, file: string): AppError {
  return new AppError('FILE_NOT_FOUND', { message: `file not found: ${env}/${file}` });
}

function decodeOnce(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new AppError('INVALID_PARAMETER', { message: 'invalid parameter: malformed percent-encoding' });
  }
}

/** The raw text, then each successive percent-decoding while it changes (at most 4 layers). */
function decodingLayers(raw: string): string[] {
  const layers = [raw];
  let current = raw;
  for (let i = 0; i < 4; i++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      break; // a literal `%` in a name: nothing further is hidden behind it
    }
    if (next === current) break;
    layers.push(next);
    current = next;
  }
  return layers;
}
