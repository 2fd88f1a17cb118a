import type { ExchangeCheck, RecordedExchange } from './recorder';
import { createSchemaCompiler, errorText, resolveLocalRefs } from './schema';

type Obj = Record<string, unknown>;

interface PathEntry {
  template: string;
  pattern: RegExp;
  item: Obj;
}

/** `{name}` matches one segment; a parameter with `x-multi-segment: true` matches the rest of the path. */
function templatePattern(template: string, item: Obj): RegExp {
  const multi = new Set<string>();
  const ops = Object.values(item).filter((v): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v));
  for (const op of [item, ...ops]) {
    for (const p of (op.parameters as Obj[] | undefined) ?? []) if (p['x-multi-segment'] === true) multi.add(String(p.name));
  }
  const escaped = template
    .split(/(\{[^}]+\})/)
    .map((part) => {
      const m = /^\{([^}]+)\}$/.exec(part);
      if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return multi.has(m[1]!) ? '(.+)' : '([^/]+)';
    })
    .join('');
  return new RegExp(`^${escaped}$`);
}

function mediaTypeMatches(declared: string, actual: string): boolean {
  if (declared === '*/*' || declared === actual) return true;
  if (declared.endsWith('/*')) return actual.startsWith(declared.slice(0, -1));
  return false;
}

/**
 * Checks exchanges against an OpenAPI 3.1 document: the path and method must be there (an
 * undescribed path falls to the document's `x-unmatched-paths` responses, the answers of any path
 * it does not list: 404, guards); the status must be a listed response (or its `4XX` range, or
 * `default`); a body's media type must be listed and a JSON body must match its schema; every
 * required response header must be there and match its schema.
 */
export function createOpenApiCheck(document: object): ExchangeCheck {
  const doc = resolveLocalRefs(document, document) as Obj;
  const compile = createSchemaCompiler();
  const paths: PathEntry[] = Object.entries((doc.paths as Obj | undefined) ?? {}).map(([template, item]) => ({
    template,
    pattern: templatePattern(template, item as Obj),
    item: item as Obj,
  }));
  // Literal paths before templated ones (`/a/b` wins over `/a/{x}`).
  paths.sort((a, b) => Number(a.template.includes('{')) - Number(b.template.includes('{')));
  const unmatched = doc['x-unmatched-paths'] as Obj | undefined;

  return function check(ex: RecordedExchange): string[] {
    const entry = paths.find((p) => p.pattern.test(ex.path));
    const method = ex.method.toLowerCase();
    let responses: Obj | undefined;
    if (entry) {
      const op = (entry.item[method] ?? (method === 'head' ? entry.item.get : undefined)) as Obj | undefined;
      responses = (op?.responses as Obj | undefined) ?? ((entry.item['x-other-methods'] as Obj | undefined)?.responses as Obj | undefined);
      if (!responses) return [`method ${ex.method} of ${entry.template} not described`];
    } else {
      responses = unmatched?.responses as Obj | undefined;
      if (!responses) return ['path not described'];
    }
    const key = [String(ex.status), `${String(ex.status)[0]}XX`, 'default'].find((k) => k in responses);
    if (!key) return [`status not described (${entry ? entry.template : 'x-unmatched-paths'} lists ${Object.keys(responses).join(', ')})`];
    const response = responses[key] as Obj;
    const where = `${entry ? entry.template : 'x-unmatched-paths'} ${key}`;
    const problems: string[] = [];

    for (const [name, header] of Object.entries((response.headers as Obj | undefined) ?? {})) {
      const h = header as Obj;
      const value = ex.headers[name.toLowerCase()];
      if (value === undefined) {
        if (h.required === true) problems.push(`required header ${name} missing (${where})`);
        continue;
      }
      if (h.schema) {
        const fn = compile(h.schema);
        if (!fn(value)) problems.push(`header ${name}: ${errorText(fn)} (${where})`);
      }
    }

    const hasBody = ex.body.length > 0 && ex.method !== 'HEAD';
    if (!hasBody || !ex.complete) return problems;
    const content = response.content as Obj | undefined;
    const contentType = (ex.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!content) return [...problems, `a ${contentType || 'untyped'} body where ${where} describes none`];
    const declared = Object.keys(content).find((m) => mediaTypeMatches(m, contentType));
    if (!declared) return [...problems, `content type ${contentType || '(none)'} not among ${Object.keys(content).join(', ')} (${where})`];
    const schema = (content[declared] as Obj).schema;
    if (schema === undefined) return problems;
    let body: unknown;
    if (declared.includes('json')) {
      try {
        body = JSON.parse(ex.body.toString('utf8'));
      } catch {
        return [...problems, `body is not JSON (${where})`];
      }
    } else if ((schema as Obj).type === 'string') {
      body = ex.body.toString('utf8');
      if ((schema as Obj).format === 'binary' || (schema as Obj).contentMediaType !== undefined) return problems;
    } else {
      return problems;
    }
    const fn = compile(schema);
    if (!fn(body)) problems.push(`body: ${errorText(fn)} (${where}) ${ex.body.toString('utf8').slice(0, 200)}`);
    return problems;
  };
}
