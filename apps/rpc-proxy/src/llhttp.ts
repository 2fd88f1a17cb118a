import { createRequire } from 'node:module';

/**
 * Node's own HTTP parser (llhttp, as `node:http` and its client use it), from Node's
 * `_http_common` module: the front end reads requests with it (src/fast-front.ts), the node
 * client the node's answers (src/node-http.ts). Internal to Node, so checked before use.
 */
export interface HttpParserBinding {
  HTTPParser: {
    new (): HttpParser;
    REQUEST: number;
    RESPONSE: number;
    kOnMessageBegin: number;
    kOnHeaders: number;
    kOnHeadersComplete: number;
    kOnBody: number;
    kOnMessageComplete: number;
    kLenientNone: number;
  };
  /** Method names by the number llhttp gives them. */
  methods: string[];
  /** Whether Node runs with `--insecure-http-parser`. */
  isLenient(): boolean;
}

/** One llhttp parser; its callbacks are set at the binding's `kOn…` indexes. */
export interface HttpParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  /** Bytes parsed, or the parse error (its `code`: `HPE_…`). */
  execute(data: Buffer): number | (Error & { code?: string });
  /** The end of the input: completes a body that runs to the connection's close, or the error of an answer cut short. */
  finish(): undefined | (Error & { code?: string });
  close(): void;
  [callback: number]: unknown;
}

let loaded: HttpParserBinding | null | undefined;

/** Node's HTTP parser, when this Node has it as expected (undefined otherwise: callers fall back to `node:http` and undici). */
export function loadHttpParser(): HttpParserBinding | undefined {
  if (loaded !== undefined) return loaded ?? undefined;
  loaded = null;
  try {
    const binding = createRequire(__filename)('_http_common') as Partial<HttpParserBinding>;
    const { HTTPParser, methods, isLenient } = binding;
    if (
      typeof HTTPParser === 'function' &&
      Array.isArray(methods) &&
      typeof isLenient === 'function' &&
      ['initialize', 'execute', 'finish', 'close'].every(
        (m) => typeof (HTTPParser.prototype as Record<string, unknown>)[m] === 'function',
      ) &&
      [
        HTTPParser.REQUEST,
        HTTPParser.RESPONSE,
        HTTPParser.kOnMessageBegin,
        HTTPParser.kOnHeaders,
        HTTPParser.kOnHeadersComplete,
        HTTPParser.kOnBody,
      ].every((n) => typeof n === 'number') &&
      typeof HTTPParser.kOnMessageComplete === 'number' &&
      typeof HTTPParser.kLenientNone === 'number'
    ) {
      loaded = binding as HttpParserBinding;
    }
  } catch {
    // no such module: undefined
  }
  return loaded ?? undefined;
}
