import type { ExchangeCheck, RecordedExchange } from './recorder';
import { createOpenApiCheck } from './openapi';
import { createSchemaCompiler, errorText, resolveLocalRefs } from './schema';

type Obj = Record<string, unknown>;

/**
 * Checks exchanges of a JSON-RPC server against an OpenRPC document. The HTTP side (paths,
 * statuses, headers, the non-RPC endpoints) is described by the document's `x-http` extension,
 * an OpenAPI 3.1 fragment (`paths`, `x-unmatched-paths`) checked as {@link createOpenApiCheck}
 * does. Each JSON-RPC answer (single or batch) is matched to its call by id: a `result` must match
 * the method's result schema, an `error` must carry a code the method lists (or the document's
 * `x-errors`, the codes any call may get).
 */
export function createOpenRpcCheck(document: object): ExchangeCheck {
  const doc = resolveLocalRefs(document, document) as Obj;
  const http = (doc['x-http'] ?? {}) as Obj;
  const httpCheck = createOpenApiCheck({ openapi: '3.1.0', info: { title: 'x-http', version: '0' }, ...http });
  const compile = createSchemaCompiler();
  const methods = new Map<string, Obj>();
  for (const m of (doc.methods as Obj[]) ?? []) methods.set(String(m.name), m);
  const anyCallErrors = new Set(((doc['x-errors'] as Obj[] | undefined) ?? []).map((e) => Number(e.code)));

  function checkAnswer(call: unknown, answer: Obj): string[] {
    const method = call && typeof call === 'object' ? (call as Obj).method : undefined;
    const m = typeof method === 'string' ? methods.get(method) : undefined;
    if (answer.error !== null && answer.error !== undefined) {
      const code = Number((answer.error as Obj).code);
      const listed = new Set([...anyCallErrors, ...((m?.errors as Obj[] | undefined) ?? []).map((e) => Number(e.code))]);
      return listed.has(code) ? [] : [`error code ${code} of ${String(method)} not described`];
    }
    if (!m) return [`a result for ${String(method)}, a method the document does not list`];
    const schema = (m.result as Obj | undefined)?.schema;
    if (schema === undefined) return [];
    const fn = compile(schema);
    return fn(answer.result) ? [] : [`result of ${String(method)}: ${errorText(fn)}`];
  }

  return function check(ex: RecordedExchange): string[] {
    const problems = httpCheck(ex);
    const type = ex.headers['content-type'] ?? '';
    if (ex.method !== 'POST' || !type.includes('json') || ex.body.length === 0 || !ex.complete) return problems;
    let request: unknown;
    let response: unknown;
    try {
      response = JSON.parse(ex.body.toString('utf8'));
    } catch {
      return [...problems, 'JSON-RPC answer is not JSON'];
    }
    try {
      request = JSON.parse(ex.requestBody.toString('utf8'));
    } catch {
      request = undefined;
    }
    const calls = Array.isArray(request) ? request : [request];
    const answers = Array.isArray(response) ? response : [response];
    for (const answer of answers) {
      if (!answer || typeof answer !== 'object') {
        problems.push('a JSON-RPC answer that is not an object');
        continue;
      }
      const id = (answer as Obj).id;
      const call = calls.find((c) => c && typeof c === 'object' && JSON.stringify((c as Obj).id) === JSON.stringify(id));
      problems.push(...checkAnswer(call ?? (calls.length === 1 ? calls[0] : undefined), answer as Obj));
    }
    return problems;
  };
}
