/**
 * JSON-RPC error codes, as Bitcoin Core uses them (src/rpc/protocol.h) and as docs/rpc-proxy.md, "Errors" lists
 * them (-32601, -32602, -32603, -1).
 */
export const RPC_ERROR_CODES = {
  /** JSON could not be parsed. */
  PARSE_ERROR: -32700,
  /** The request object is malformed. */
  INVALID_REQUEST: -32600,
  /** The method does not exist or is not allowed. */
  METHOD_NOT_FOUND: -32601,
  /** The parameters have the wrong shape. */
  INVALID_PARAMS: -32602,
  /** Internal error (here also: the node is unreachable, timed out or answered garbage). */
  INTERNAL_ERROR: -32603,
  /** Bitcoin Core's RPC_MISC_ERROR; the proxy's authentication error (docs/rpc-proxy.md, "Authentication"). */
  MISC_ERROR: -1,
  /** Bitcoin Core's RPC_TYPE_ERROR. */
  TYPE_ERROR: -3,
  /** Bitcoin Core's RPC_INVALID_ADDRESS_OR_KEY (block or transaction not found). */
  INVALID_ADDRESS_OR_KEY: -5,
  /** Bitcoin Core's RPC_INVALID_PARAMETER. */
  INVALID_PARAMETER: -8,
  /** Bitcoin Core's RPC_IN_WARMUP. */
  IN_WARMUP: -28,
} as const;

/** One of the codes of {@link RPC_ERROR_CODES} (nodes may answer others, passed through). */
export type RpcErrorCode = (typeof RPC_ERROR_CODES)[keyof typeof RPC_ERROR_CODES];

/** The JSON-RPC error object. */
export interface RpcErrorObject {
  code: number;
  message: string;
}

/** An error to be answered as a JSON-RPC error object. */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  readonly code: number;

  constructor(code: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  /** The `{code, message}` object of the envelope. */
  toJSON(): RpcErrorObject {
    return { code: this.code, message: this.message };
  }
}
