import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/** Replaces every local `$ref` (`#/…`) of `value` with what it points at, in a copy. */
export function resolveLocalRefs<T>(root: unknown, value: T, depth = 0): T {
  if (depth > 64) throw new Error('$ref nesting too deep (a cycle?)');
  if (Array.isArray(value)) return value.map((v) => resolveLocalRefs(root, v, depth)) as T;
  if (value === null || typeof value !== 'object') return value;
  const obj = value as Record<string, unknown>;
  if (typeof obj.$ref === 'string' && obj.$ref.startsWith('#/')) {
    let target: unknown = root;
    for (const raw of obj.$ref.slice(2).split('/')) {
      const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      target = (target as Record<string, unknown> | undefined)?.[part];
      if (target === undefined) throw new Error(`unresolved $ref ${obj.$ref}`);
    }
    return resolveLocalRefs(root, target as T, depth + 1);
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = resolveLocalRefs(root, v, depth);
  return out as T;
}

/** A JSON Schema 2020-12 compiler (the dialect of OpenAPI 3.1, OpenRPC schemas and AsyncAPI 3 payloads). */
export function createSchemaCompiler(): (schema: unknown) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  const cache = new Map<unknown, ValidateFunction>();
  return (schema) => {
    let fn = cache.get(schema);
    if (!fn) {
      fn = ajv.compile(schema as object);
      cache.set(schema, fn);
    }
    return fn;
  };
}

/** Ajv's errors as one line. */
export function errorText(fn: ValidateFunction): string {
  return (fn.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`.trim()).join('; ');
}
