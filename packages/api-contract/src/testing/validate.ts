import { execFile } from 'node:child_process';
import { join } from 'node:path';

/** The worker lives beside `src/` and `dist/` (two levels up from this module in both). */
const WORKER = join(__dirname, '..', '..', 'validate-worker.mjs');

function validateInWorker(kind: 'openapi' | 'openrpc' | 'asyncapi', document: object): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [WORKER], { maxBuffer: 16 * 1024 * 1024, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`${kind} validator failed: ${stderr || err.message}`));
        return;
      }
      resolve(JSON.parse(stdout) as string[]);
    });
    child.stdin?.end(JSON.stringify({ kind, document }));
  });
}

/**
 * Validates an OpenAPI 3.1 document with `@readme/openapi-parser` (the OpenAPI schema and its
 * semantic checks: unique operation ids, path parameters declared, …) and lints it with Redocly's
 * `recommended` ruleset (errors only: servers, summaries, a security requirement on every
 * operation, `security: []` where none is needed). Resolves to the problems.
 */
export function validateOpenApiDocument(document: object): Promise<string[]> {
  return validateInWorker('openapi', document);
}

/** Validates an OpenRPC document with `@open-rpc/schema-utils-js` (the OpenRPC meta-schema). */
export function validateOpenRpcDocument(document: object): Promise<string[]> {
  return validateInWorker('openrpc', document);
}

/** Validates an AsyncAPI document with `@asyncapi/parser` (errors and warnings; hints are left out). */
export function validateAsyncApiDocument(document: object): Promise<string[]> {
  return validateInWorker('asyncapi', document);
}
