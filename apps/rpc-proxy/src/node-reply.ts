/* The node's replies and failures, shared by the node client's modules. */

/** Why a node call failed (each becomes -32603 with a message saying which). */
export type NodeFailure = 'unreachable' | 'timeout' | 'garbage' | 'busy' | 'auth' | 'cookie' | 'queue';

/** A node call that failed; `message` is what the client reads. */
export class NodeError extends Error {
  override readonly name = 'NodeError';
  constructor(
    readonly kind: NodeFailure,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A JSON answer of the node: its status and exact bytes. The body is checked to be a JSON
 * object or array by its first and last characters only ({@link looksLikeJson}); callers
 * that need the value parse it themselves ({@link parseReply}), so answers that pass
 * through untouched are never parsed.
 */
export interface NodeReply {
  status: number;
  body: Buffer;
}

/** True for JSON whitespace (space, tab, LF, CR). */
function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * A cheap shape check of a node answer: its first and last non-blank characters are `{`…`}`
 * or `[`…`]`. It tells a JSON-RPC reply from what a wrong service on the port sends (an
 * HTML page, plain text, an empty body) without parsing megabytes of block JSON.
 */
export function looksLikeJson(body: Buffer): boolean {
  let i = 0;
  let j = body.length - 1;
  while (i <= j && isSpace(body[i])) i++;
  while (j >= i && isSpace(body[j])) j--;
  if (j <= i) return false;
  const first = body[i];
  const last = body[j];
  return (first === 0x7b && last === 0x7d) || (first === 0x5b && last === 0x5d);
}

/** The parsed value of a reply (an object or array); throws NodeError `garbage` when it is not JSON. */
export function parseReply(reply: NodeReply): unknown {
  try {
    return JSON.parse(reply.body.toString('utf8')) as unknown;
  } catch {
    throw new NodeError('garbage', `node answered garbage (HTTP ${reply.status}, not JSON)`);
  }
}
