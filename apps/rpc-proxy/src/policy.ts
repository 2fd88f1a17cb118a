/** The five methods of the interface (docs/rpc-proxy.md, "Methods"): always allowed. */
export const SPEC_METHODS = ['getblockchaininfo', 'getblock', 'getrawtransaction', 'sendrawtransaction', 'getwalletinfo'] as const;

/**
 * Read-only methods a wallet or a scanner needs, allowed by default on top of the interface's
 * five (RPC_ALLOWED_METHODS replaces this list). Nothing here changes node state or reveals
 * more than the chain and the mempool do.
 */
export const DEFAULT_ALLOWED_METHODS: readonly string[] = [
  'getblockhash',
  'getblockheader',
  'getbestblockhash',
  'getblockcount',
  'getchaintips',
  'getdifficulty',
  'getrawmempool',
  'getmempoolinfo',
  'getmempoolentry',
  'gettxout',
  'estimatesmartfee',
  'getnetworkinfo',
  'getdeploymentinfo',
  'decoderawtransaction',
  'decodescript',
  'testmempoolaccept',
  'getbalances',
  // bitcoin-cli -getinfo asks it to show its Balances section (one wallet or several).
  'listwallets',
  'uptime',
  'waitfornewblock',
];

/**
 * Methods never gathered into a batch with other calls
 * (docs/rpc-proxy.md, "Batching toward the node"): replies that can run to megabytes (a batch
 * reply is split in JavaScript, a lone reply passes through untouched) and calls that can run
 * for seconds (Core runs a batch's calls one after the other, so they would hold up the others).
 */
export const UNBATCHED_METHODS: ReadonlySet<string> = new Set([
  'getblock',
  'getrawmempool',
  'getrawtransaction',
  'getblockstats',
  'gettxoutsetinfo',
  'scantxoutset',
  'scanblocks',
  'getblocktemplate',
  'generatetoaddress',
  'generateblock',
  'listtransactions',
  'listunspent',
  'listsinceblock',
  'rescanblockchain',
  'importdescriptors',
  'dumptxoutset',
  'loadtxoutset',
  'waitfornewblock',
  'waitforblock',
  'waitforblockheight',
]);

/**
 * Long polls (docs/rpc-proxy.md, "Long polls"): calls the node holds until something happens or
 * their `timeout` (ms) passes. They go to the node over their own connections
 * (NODE_LONG_POLL_MAX_CONCURRENCY) with their own timer, never holding a slot or the timer of
 * ordinary calls, must name a timeout of at most NODE_LONG_POLL_TIMEOUT_MS, and are refused in
 * batches (one would hold the whole batch).
 */
export const LONG_POLL_METHODS: ReadonlySet<string> = new Set(['waitfornewblock']);

/**
 * Methods whose identical calls in flight are merged into one node call (RPC_COALESCE,
 * docs/rpc-proxy.md, "Coalescing"): reads of the chain, the mempool and the network only. Never a method that
 * changes node state (sendrawtransaction, …) nor any wallet call; calls on `/wallet/<name>`
 * paths are never merged whatever the method.
 */
export const COALESCE_METHODS: ReadonlySet<string> = new Set([
  'getblockchaininfo',
  'getblock',
  'getblockhash',
  'getblockheader',
  'getblockstats',
  'getbestblockhash',
  'getblockcount',
  'getchaintips',
  'getchaintxstats',
  'getdifficulty',
  'getdeploymentinfo',
  'getrawtransaction',
  'getrawmempool',
  'getmempoolinfo',
  'getmempoolentry',
  'gettxout',
  'gettxoutsetinfo',
  'getnetworkinfo',
  'getmininginfo',
  'estimatesmartfee',
  'decoderawtransaction',
  'decodescript',
]);

/** A parameter of the wrong shape: answered -32602 with this message. */
export class ParamError extends Error {
  override readonly name = 'ParamError';
}

type Check = (value: unknown, name: string) => void;

const HEX64 = /^[0-9a-fA-F]{64}$/;

const hash64: Check = (v, name) => {
  if (typeof v !== 'string' || !HEX64.test(v)) throw new ParamError(`invalid parameter "${name}": expected a string of 64 hex characters`);
};
const evenHex: Check = (v, name) => {
  if (typeof v !== 'string' || v.length === 0 || v.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(v)) {
    throw new ParamError(`invalid parameter "${name}": expected a non-empty hex string of even length`);
  }
};
const bool: Check = (v, name) => {
  if (typeof v !== 'boolean') throw new ParamError(`invalid parameter "${name}": expected true or false`);
};
const intRange =
  (min: number, max: number): Check =>
  (v, name) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw new ParamError(`invalid parameter "${name}": expected an integer from ${min} to ${max}`);
    }
  };
const verbosity =
  (max: number): Check =>
  (v, name) => {
    if (typeof v === 'boolean') return;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) {
      throw new ParamError(`invalid parameter "${name}": expected an integer from 0 to ${max} or a boolean`);
    }
  };
/**
 * An amount written as a string, as Core reads one (ParseFixedPoint: JSON's number grammar, no
 * blanks): Number() would also take `""`, `" 1"`, `"0x10"` or `".5"`, which Core refuses (-3).
 */
const AMOUNT_TEXT = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$/;
const feeAmount: Check = (v, name) => {
  const n = typeof v === 'string' ? (AMOUNT_TEXT.test(v) ? Number(v) : Number.NaN) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0)
    throw new ParamError(`invalid parameter "${name}": expected a non-negative amount`);
};
const oneOf =
  (values: string[]): Check =>
  (v, name) => {
    if (typeof v !== 'string' || !values.includes(v.toLowerCase()))
      throw new ParamError(`invalid parameter "${name}": expected one of ${values.join(', ')}`);
  };

interface ParamSpec {
  /** Names (aliases after `|`) and checks, by position. */
  params: [names: string, check: Check, required?: boolean][];
}

/** Shapes of the parameters checked before forwarding (docs/rpc-proxy.md, "Parameter checks"; Core's own RPC help for names). */
const SPECS: Record<string, ParamSpec> = {
  getblockchaininfo: { params: [] },
  getwalletinfo: { params: [] },
  getblockcount: { params: [] },
  getbestblockhash: { params: [] },
  getmempoolinfo: { params: [] },
  getnetworkinfo: { params: [] },
  getdifficulty: { params: [] },
  getchaintips: { params: [] },
  uptime: { params: [] },
  getblock: {
    params: [
      ['blockhash', hash64, true],
      ['verbosity|verbose', verbosity(3)],
    ],
  },
  getblockheader: {
    params: [
      ['blockhash', hash64, true],
      ['verbose', bool],
    ],
  },
  getblockhash: { params: [['height', intRange(0, 2 ** 31 - 1), true]] },
  getrawtransaction: {
    params: [
      ['txid', hash64, true],
      ['verbosity|verbose', verbosity(2)],
      ['blockhash', hash64],
    ],
  },
  sendrawtransaction: {
    params: [
      ['hexstring', evenHex, true],
      ['maxfeerate', feeAmount],
      ['maxburnamount', feeAmount],
    ],
  },
  getrawmempool: {
    params: [
      ['verbose', bool],
      ['mempool_sequence', bool],
    ],
  },
  getmempoolentry: { params: [['txid', hash64, true]] },
  waitfornewblock: {
    params: [
      ['timeout', intRange(0, 2 ** 31 - 1)],
      ['current_tip', hash64],
    ],
  },
  gettxout: {
    params: [
      ['txid', hash64, true],
      ['n', intRange(0, 2 ** 32 - 1), true],
      ['include_mempool', bool],
    ],
  },
  estimatesmartfee: {
    params: [
      ['conf_target', intRange(1, 1008), true],
      ['estimate_mode', oneOf(['unset', 'economical', 'conservative'])],
    ],
  },
};

/** A parameter as checked: its name (the first of its `names`), every name it may be given by, its check. */
interface Param {
  name: string;
  aliases: string[];
  check: Check;
  required: boolean;
}

/** {@link SPECS} with the names split, once, by method. */
const PARAMS = new Map<string, Param[]>(
  Object.entries(SPECS).map(([method, spec]) => [
    method,
    spec.params.map(([names, check, required]) => {
      const aliases = names.split('|');
      return { name: aliases[0] as string, aliases, check, required: required === true };
    }),
  ]),
);

/**
 * Checks the parameters of a call whose shape is known (positional array or named object);
 * other methods pass unchecked. Returns them as a positional array (undefined for omitted).
 * Throws ParamError naming the parameter.
 */
export function checkParams(method: string, params: unknown[] | Record<string, unknown>): unknown[] | undefined {
  const spec = PARAMS.get(method);
  if (spec === undefined) return undefined;
  let positional: unknown[];
  if (Array.isArray(params)) {
    positional = params;
    if (params.length > spec.length) {
      throw new ParamError(`too many parameters for ${method}: at most ${spec.length}, got ${params.length}`);
    }
  } else {
    positional = [];
    for (const key of Object.keys(params)) {
      const index = spec.findIndex((p) => p.aliases.includes(key));
      if (index < 0) throw new ParamError(`unknown parameter "${key}" for ${method}`);
      positional[index] = params[key];
    }
  }
  spec.forEach(({ name, check, required }, i) => {
    const value = positional[i];
    if (value === undefined || value === null) {
      if (required) throw new ParamError(`missing parameter "${name}" for ${method}`);
      return;
    }
    check(value, name);
  });
  return positional;
}

/** The methods `user` may call: its own list when it has one, else the global list. */
export function methodsFor(user: string, allowed: Set<string>, perUser: Map<string, Set<string>>): Set<string> {
  return perUser.get(user) ?? allowed;
}
