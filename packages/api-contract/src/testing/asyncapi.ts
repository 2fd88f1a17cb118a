import { createSchemaCompiler, errorText, resolveLocalRefs } from './schema';

type Obj = Record<string, unknown>;

/**
 * A checker of WebSocket messages against an AsyncAPI 3 document: `check(message)` returns the
 * problems when the message matches none of the document's messages (by `payload` schema).
 */
export function createAsyncApiMessageCheck(document: object): (message: unknown) => string[] {
  const doc = resolveLocalRefs(document, document) as Obj;
  const compile = createSchemaCompiler();
  const messages = Object.entries(((doc.components as Obj | undefined)?.messages as Obj | undefined) ?? {});
  return (message) => {
    const errors: string[] = [];
    for (const [name, m] of messages) {
      const fn = compile((m as Obj).payload);
      if (fn(message)) return [];
      errors.push(`${name}: ${errorText(fn)}`);
    }
    return [`message matches no documented message: ${JSON.stringify(message).slice(0, 200)}`];
  };
}
