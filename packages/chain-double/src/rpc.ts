import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { blockWork, difficulty, bitsToTarget, headerHex } from './block';
import { type Chain, ChainError, type BlockRecord } from './chain';
import { amount, JsonRaw, writeJson } from './encoding';
import { txToJson, type DecodedTx } from './tx';

/** An error thrown by a method: answered as `{code, message}`. */
export class RpcMethodError extends Error {
  override readonly name = 'RpcMethodError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

type ArgType = 'num' | 'str' | 'hex' | 'bool' | 'amount' | 'arr' | 'any';

interface ArgSpec {
  /** Names, aliases separated by `|` as Core's help shows them (`verbosity|verbose`). */
  names: string;
  type: ArgType;
  required?: boolean;
}

/** What a method sees of the request. */
export interface MethodContext {
  chain: Chain;
  /** The wallet named by the `/wallet/<name>` path, if any. */
  walletPath: string | undefined;
  wallets: readonly string[];
  /** Fee rate estimatesmartfee answers (BTC/kvB), or undefined for "no data". */
  feeRate: number | undefined;
  /** While set, the node is in its initial block download (see ChainDouble.setInitialBlockDownload). */
  syncing?: { headers: number; progress: number } | undefined;
}

interface MethodSpec {
  args: ArgSpec[];
  help: string;
  run(params: unknown[], ctx: MethodContext): unknown;
}

const MAX_TIP_AGE = 24 * 60 * 60;

function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'string';
  return 'object';
}

function matches(type: ArgType, v: unknown): string | true {
  const expected = { num: 'number', str: 'string', hex: 'string', bool: 'bool', amount: 'number', arr: 'array', any: '' }[type];
  if (type === 'any') return true;
  if (type === 'amount' && (typeof v === 'number' || typeof v === 'string')) return true;
  if (typeName(v) === expected) return true;
  return `JSON value of type ${typeName(v)} is not of expected type ${expected}`;
}

/** Core's getInt<int>: a number that is an integer, else the runtime error (answered -1). */
function getInt(v: unknown): number {
  if (typeof v !== 'number') throw new RpcMethodError(-1, `JSON value of type ${typeName(v)} is not of expected type number`);
  if (!Number.isInteger(v)) throw new RpcMethodError(-1, 'JSON integer out of range');
  return v;
}

/** Core's ParseHashV. */
function parseHash(v: unknown, name: string): string {
  const text = String(v);
  if (/^[0-9a-fA-F]{64}$/.test(text)) return text.toLowerCase();
  if (text.length !== 64) throw new RpcMethodError(-8, `${name} must be of length 64 (not ${text.length}, for '${text}')`);
  throw new RpcMethodError(-8, `${name} must be hexadecimal string (not '${text}')`);
}

/** Core's ParseVerbosity with booleans allowed. */
function parseVerbosity(v: unknown, fallback: number): number {
  if (v === null || v === undefined) return fallback;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return getInt(v);
}

function confirmations(chain: Chain, block: BlockRecord): number {
  return chain.isActive(block) ? chain.tipHeight() - block.height + 1 : -1;
}

/** Core's blockheaderToJSON. */
export function headerJson(chain: Chain, block: BlockRecord): Record<string, unknown> {
  const h = block.header;
  const next = chain.isActive(block) ? chain.active[block.height + 1] : undefined;
  return {
    hash: block.hash,
    confirmations: confirmations(chain, block),
    height: block.height,
    version: h.version,
    versionHex: (h.version >>> 0).toString(16).padStart(8, '0'),
    merkleroot: h.merkleRoot,
    time: h.time,
    mediantime: block.mediantime,
    nonce: h.nonce,
    bits: h.bits.toString(16).padStart(8, '0'),
    target: bitsToTarget(h.bits).toString(16).padStart(64, '0'),
    difficulty: difficulty(h.bits),
    chainwork: block.chainwork.toString(16).padStart(64, '0'),
    nTx: block.txs.length,
    previousblockhash: block.height > 0 ? h.prev : undefined,
    nextblockhash: next?.hash,
  };
}

/** Core's blockToJSON at verbosity 1 (txids), 2 (decoded, fees) or 3 (plus prevouts). */
export function blockJson(chain: Chain, block: BlockRecord, verbosity: number): Record<string, unknown> {
  const json = headerJson(chain, block);
  json.strippedsize = block.strippedSize;
  json.size = block.size;
  json.weight = block.weight;
  json.tx =
    verbosity <= 1
      ? block.txs.map((t) => t.txid)
      : block.txs.map((t, i) => txToJson(t, { params: chain.params, undo: block.undo[i], fee: true, prevout: verbosity >= 3 }));
  return json;
}

function findTx(chain: Chain, txid: string): { tx: DecodedTx; block?: BlockRecord; index?: number } | undefined {
  const entry = chain.mempool.get(txid);
  if (entry) return { tx: entry.tx };
  const hash = chain.txIndex.get(txid);
  const block = hash === undefined ? undefined : chain.getBlock(hash);
  if (!block) return undefined;
  const index = block.txs.findIndex((t) => t.txid === txid);
  return { tx: block.txs[index] as DecodedTx, block, index };
}

function walletFor(ctx: MethodContext): string {
  if (ctx.walletPath !== undefined) {
    if (!ctx.wallets.includes(ctx.walletPath)) throw new RpcMethodError(-18, 'Requested wallet does not exist or is not loaded');
    return ctx.walletPath;
  }
  if (ctx.wallets.length === 1) return ctx.wallets[0] as string;
  if (ctx.wallets.length === 0) {
    throw new RpcMethodError(
      -18,
      'No wallet is loaded. Load a wallet using loadwallet or create a new one with createwallet. (Note: A default wallet is no longer automatically created)',
    );
  }
  throw new RpcMethodError(
    -19,
    'Multiple wallets are loaded. Please select which wallet to use by requesting the RPC through the /wallet/<walletname> URI path.',
  );
}

function walletBalances(ctx: MethodContext, wallet: string) {
  // The first wallet owns the double's miner key; the others are empty.
  if (wallet !== ctx.wallets[0]) return { trusted: 0n, immature: 0n, pending: 0n, txcount: 0 };
  return ctx.chain.minerBalances();
}

/**
 * Bitcoin Core 29.2's own `help <method>` texts of the methods served (recorded from bitcoind
 * 29.2 on regtest, `fixtures/bitcoind-help.json`): Core answers a wrong argument count with
 * -1 and exactly that text.
 */
const CORE_HELP = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'bitcoind-help.json'), 'utf8')) as Record<string, string>;

function help(name: string, args: ArgSpec[], text: string): string {
  const recorded = CORE_HELP[name];
  if (recorded !== undefined) return recorded;
  const usage = [name, ...args.map((a) => (a.required ? `"${a.names.split('|')[0]}"` : `( "${a.names.split('|')[0]}" )`))].join(' ');
  return `${usage}\n\n${text}\n`;
}

const METHODS: Record<string, MethodSpec> = {
  getblockchaininfo: {
    args: [],
    help: 'Returns an object containing various state info regarding blockchain processing.',
    run(_p, { chain, syncing }) {
      const tip = chain.tip;
      const ibd = syncing !== undefined || tip.header.time < Math.floor(Date.now() / 1000) - MAX_TIP_AGE;
      const sizeOnDisk = chain.active.reduce((s, b) => s + b.size + 8, 0);
      return {
        chain: chain.name,
        blocks: tip.height,
        headers: syncing !== undefined ? Math.max(syncing.headers, tip.height) : tip.height,
        bestblockhash: tip.hash,
        bits: tip.header.bits.toString(16).padStart(8, '0'),
        target: bitsToTarget(tip.header.bits).toString(16).padStart(64, '0'),
        difficulty: difficulty(tip.header.bits),
        time: tip.header.time,
        mediantime: tip.mediantime,
        verificationprogress: syncing !== undefined ? syncing.progress : ibd ? 1 / (1 + (Date.now() / 1000 - tip.header.time)) : 1,
        initialblockdownload: ibd,
        chainwork: tip.chainwork.toString(16).padStart(64, '0'),
        size_on_disk: sizeOnDisk,
        pruned: false,
        signet_challenge: chain.name === 'signet' ? SIGNET_CHALLENGE : undefined,
        warnings: [],
      };
    },
  },
  getblockcount: {
    args: [],
    help: 'Returns the height of the most-work fully-validated chain.',
    run: (_p, { chain }) => chain.tipHeight(),
  },
  getbestblockhash: {
    args: [],
    help: 'Returns the hash of the best (tip) block in the most-work fully-validated chain.',
    run: (_p, { chain }) => chain.tipHash(),
  },
  getblockhash: {
    args: [{ names: 'height', type: 'num', required: true }],
    help: 'Returns hash of block in best-block-chain at height provided.',
    run([height], { chain }) {
      const h = getInt(height);
      if (h < 0 || h > chain.tipHeight()) throw new RpcMethodError(-8, 'Block height out of range');
      return (chain.active[h] as BlockRecord).hash;
    },
  },
  getblockheader: {
    args: [
      { names: 'blockhash', type: 'hex', required: true },
      { names: 'verbose', type: 'bool' },
    ],
    help: "If verbose is false, returns a string that is serialized, hex-encoded data for blockheader 'hash'.",
    run([hash, verbose], { chain }) {
      const block = chain.getBlock(parseHash(hash, 'hash'));
      if (!block) throw new RpcMethodError(-5, 'Block not found');
      return verbose === false ? headerHex(block.header) : headerJson(chain, block);
    },
  },
  getblock: {
    args: [
      { names: 'blockhash', type: 'hex', required: true },
      { names: 'verbosity|verbose', type: 'any' },
    ],
    help: "If verbosity is 0, returns a string that is serialized, hex-encoded data for block 'hash'.",
    run([hash, verbosityArg], { chain }) {
      const block = chain.getBlock(parseHash(hash, 'blockhash'));
      if (!block) throw new RpcMethodError(-5, 'Block not found');
      const verbosity = parseVerbosity(verbosityArg, 1);
      if (verbosity <= 0) return block.hex;
      return blockJson(chain, block, verbosity);
    },
  },
  getrawtransaction: {
    args: [
      { names: 'txid', type: 'hex', required: true },
      { names: 'verbosity|verbose', type: 'any' },
      { names: 'blockhash', type: 'hex' },
    ],
    help: 'By default, this call only returns a transaction if it is in the mempool. If -txindex is enabled and no blockhash argument is passed, it will return the transaction if it is in a block in the blockchain.',
    run([txidArg, verbosityArg, blockhashArg], { chain }) {
      const txid = parseHash(txidArg, 'parameter 1');
      const verbosity = parseVerbosity(verbosityArg, 0);
      if (txid === chain.genesisCoinbaseTxid) {
        throw new RpcMethodError(-5, 'The genesis block coinbase is not considered an ordinary transaction and cannot be retrieved');
      }
      let found: { tx: DecodedTx; block?: BlockRecord; index?: number } | undefined;
      let inActiveChain: boolean | undefined;
      if (blockhashArg !== undefined && blockhashArg !== null) {
        const block = chain.getBlock(parseHash(blockhashArg, 'parameter 3'));
        if (!block) throw new RpcMethodError(-5, 'Block hash not found');
        inActiveChain = chain.isActive(block);
        const index = block.txs.findIndex((t) => t.txid === txid);
        if (index < 0)
          throw new RpcMethodError(-5, 'No such transaction found in the provided block. Use gettransaction for wallet transactions.');
        found = { tx: block.txs[index] as DecodedTx, block, index };
      } else {
        found = findTx(chain, txid);
        if (!found) throw new RpcMethodError(-5, 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.');
      }
      if (verbosity <= 0) return found.tx.hex;
      const { tx, block, index } = found;
      const withUndo = verbosity >= 2 && block !== undefined && !tx.isCoinbase;
      const json: Record<string, unknown> = {};
      if (inActiveChain !== undefined) json.in_active_chain = inActiveChain;
      Object.assign(
        json,
        txToJson(tx, { params: chain.params, undo: withUndo ? block.undo[index as number] : undefined, fee: withUndo, prevout: withUndo }),
      );
      if (block) {
        json.blockhash = block.hash;
        if (chain.isActive(block)) {
          json.confirmations = chain.tipHeight() - block.height + 1;
          json.time = block.header.time;
          json.blocktime = block.header.time;
        } else {
          json.confirmations = 0;
        }
      }
      return json;
    },
  },
  sendrawtransaction: {
    args: [
      { names: 'hexstring', type: 'hex', required: true },
      { names: 'maxfeerate', type: 'amount' },
      { names: 'maxburnamount', type: 'amount' },
    ],
    help: 'Submit a raw transaction (serialized, hex-encoded) to local node and network.',
    run([hex, maxfeerate], { chain }) {
      const rate = maxfeerate === undefined || maxfeerate === null ? 0.1 : Number(maxfeerate);
      return chain.sendRawTransaction(String(hex), rate);
    },
  },
  getrawmempool: {
    args: [
      { names: 'verbose', type: 'bool' },
      { names: 'mempool_sequence', type: 'bool' },
    ],
    help: 'Returns all transaction ids in memory pool as a json array of string transaction ids.',
    run([verbose], { chain }) {
      if (verbose !== true) return [...chain.mempool.keys()];
      const out: Record<string, unknown> = {};
      for (const [txid, e] of chain.mempool) {
        const depends = e.tx.inputs.map((i) => i.txid).filter((t) => chain.mempool.has(t));
        out[txid] = {
          vsize: e.tx.vsize,
          weight: e.tx.weight,
          time: e.time,
          height: e.height,
          descendantcount: 1,
          descendantsize: e.tx.vsize,
          ancestorcount: 1 + depends.length,
          ancestorsize: e.tx.vsize,
          wtxid: e.tx.hash,
          fees: { base: amount(e.fee), modified: amount(e.fee), ancestor: amount(e.fee), descendant: amount(e.fee) },
          depends: [...new Set(depends)],
          spentby: [],
          'bip125-replaceable': false,
          unbroadcast: true,
        };
      }
      return out;
    },
  },
  getmempoolinfo: {
    args: [],
    help: 'Returns details on the active state of the TX memory pool.',
    run(_p, { chain }) {
      let bytes = 0;
      let fees = 0n;
      for (const e of chain.mempool.values()) {
        bytes += e.tx.vsize;
        fees += e.fee;
      }
      return {
        loaded: true,
        size: chain.mempool.size,
        bytes,
        usage: bytes * 4 + chain.mempool.size * 600,
        total_fee: amount(fees),
        maxmempool: 300000000,
        mempoolminfee: amount(100n),
        minrelaytxfee: amount(100n),
        incrementalrelayfee: amount(100n),
        unbroadcastcount: chain.mempool.size,
        fullrbf: true,
      };
    },
  },
  getnetworkinfo: {
    args: [],
    help: 'Returns an object containing various state info regarding P2P networking.',
    run() {
      const network = (name: string, limited: boolean) => ({
        name,
        limited,
        reachable: !limited,
        proxy: '',
        proxy_randomize_credentials: false,
      });
      return {
        version: 290200,
        subversion: '/Satoshi:29.2.0/',
        protocolversion: 70016,
        localservices: '0000000000000c09',
        localservicesnames: ['NETWORK', 'WITNESS', 'NETWORK_LIMITED', 'P2P_V2'],
        localrelay: true,
        timeoffset: 0,
        networkactive: true,
        connections: 0,
        connections_in: 0,
        connections_out: 0,
        networks: [network('ipv4', false), network('ipv6', false), network('onion', true), network('i2p', true), network('cjdns', true)],
        relayfee: amount(100n),
        incrementalfee: amount(100n),
        localaddresses: [],
        warnings: [],
      };
    },
  },
  estimatesmartfee: {
    args: [
      { names: 'conf_target', type: 'num', required: true },
      { names: 'estimate_mode', type: 'str' },
    ],
    help: 'Estimates the approximate fee per kilobyte needed for a transaction to begin confirmation within conf_target blocks if possible and return the number of blocks for which the estimate is valid.',
    run([target], { feeRate }) {
      const blocks = getInt(target);
      if (blocks < 1 || blocks > 1008) throw new RpcMethodError(-8, `Invalid conf_target, must be between 1 and 1008`);
      if (feeRate === undefined) return { errors: ['Insufficient data or no feerate found'], blocks: 0 };
      return { feerate: amount(BigInt(Math.round(feeRate * 1e8))), blocks };
    },
  },
  getwalletinfo: {
    args: [],
    help: 'Returns an object containing various wallet state info.',
    run(_p, ctx) {
      const wallet = walletFor(ctx);
      const b = walletBalances(ctx, wallet);
      return {
        walletname: wallet,
        walletversion: 169900,
        format: 'sqlite',
        balance: amount(b.trusted),
        unconfirmed_balance: amount(b.pending),
        immature_balance: amount(b.immature),
        txcount: b.txcount,
        keypoolsize: 4000,
        keypoolsize_hd_internal: 4000,
        paytxfee: amount(0n),
        private_keys_enabled: true,
        avoid_reuse: false,
        scanning: false,
        descriptors: true,
        external_signer: false,
        blank: false,
        birthtime: (ctx.chain.active[1] ?? ctx.chain.tip).header.time,
        lastprocessedblock: { hash: ctx.chain.tipHash(), height: ctx.chain.tipHeight() },
      };
    },
  },
  getbalances: {
    args: [],
    help: 'Returns an object with all balances in BTC.',
    run(_p, ctx) {
      const b = walletBalances(ctx, walletFor(ctx));
      return {
        mine: { trusted: amount(b.trusted), untrusted_pending: amount(b.pending), immature: amount(b.immature) },
        lastprocessedblock: { hash: ctx.chain.tipHash(), height: ctx.chain.tipHeight() },
      };
    },
  },
  listwallets: { args: [], help: 'Returns a list of currently loaded wallets.', run: (_p, ctx) => [...ctx.wallets] },
};

/** The default signet challenge (Core's chainparams), shown by getblockchaininfo on signet. */
const SIGNET_CHALLENGE =
  '512103ad5e0edad18cb1f0fc0d28a3d4f1f3e445640337489abb10404f2d1e086be430210359ef5021964fe22d6f8e05b2463c9540ce96883fe3b278760f048f5189f2e6c452ae';

/** The RPC methods the double serves. */
export const SERVED_METHODS: readonly string[] = Object.keys(METHODS);

/**
 * Executes one call as Core's CRPCTable::execute does after the envelope is parsed: method
 * lookup (-32601), named-parameter mapping (-8 for an unknown name), argument count (-1 with
 * the help text), type checks (-3 listing each position), then the method.
 */
export function executeMethod(method: string, params: unknown[] | Record<string, unknown>, ctx: MethodContext): unknown {
  const spec = Object.prototype.hasOwnProperty.call(METHODS, method) ? METHODS[method] : undefined;
  if (!spec) throw new RpcMethodError(-32601, 'Method not found');
  let positional: unknown[];
  if (Array.isArray(params)) {
    positional = params;
  } else {
    positional = [];
    for (const key of Object.keys(params)) {
      const index = spec.args.findIndex((a) => a.names.split('|').includes(key));
      if (index < 0) throw new RpcMethodError(-8, `Unknown named parameter ${key}`);
      positional[index] = params[key];
    }
    for (let i = 0; i < positional.length; i++) if (!(i in positional)) positional[i] = null;
  }
  const required = spec.args.filter((a) => a.required).length;
  if (positional.length > spec.args.length || positional.length < required) {
    throw new RpcMethodError(-1, help(method, spec.args, spec.help));
  }
  const mismatch: Record<string, string> = {};
  spec.args.forEach((arg, i) => {
    const v = positional[i];
    if ((v === undefined || v === null) && !arg.required) return;
    const ok = matches(arg.type, v);
    if (ok !== true) mismatch[`Position ${i + 1} (${arg.names})`] = ok;
  });
  if (Object.keys(mismatch).length > 0) {
    const lines = Object.entries(mismatch).map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    throw new RpcMethodError(-3, `Wrong type passed:\n{\n${lines.join(',\n')}\n}`);
  }
  try {
    return spec.run(positional, ctx);
  } catch (err) {
    if (err instanceof ChainError) throw new RpcMethodError(err.code, err.message);
    throw err;
  }
}

export { writeJson, JsonRaw, blockWork };
