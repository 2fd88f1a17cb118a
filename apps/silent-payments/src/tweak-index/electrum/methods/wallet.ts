import { createHash } from 'node:crypto';
import { byScriptHash, historyOf, onFoundChanged, outputsOf, type FoundOutput } from '../../remote-scan/found-outputs';
import { ElectrumError, intParam, RPC_ERRORS, type ElectrumContext, type ElectrumMethods, type NodeCalls } from '../protocol';
import { foundByConnection } from './silent-payments';

const SCRIPTHASHES = 'scripthashes';
/** Headers one `blockchain.block.headers` answers at most (Electrum's). */
const MAX_HEADERS = 2016;

function nodeOf(ctx: ElectrumContext): NodeCalls {
  if (ctx.feed.node === undefined) throw new ElectrumError(RPC_ERRORS.node, 'this server has no node configured for wallet methods');
  return ctx.feed.node;
}

/** A node call whose failure is answered as `-32003` with the node's message. */
async function nodeCall<T>(ctx: ElectrumContext, method: string, params: unknown[]): Promise<T> {
  const node = nodeOf(ctx);
  try {
    return await node.call<T>(method, params);
  } catch (error) {
    throw new ElectrumError(RPC_ERRORS.node, `the node refused ${method}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function hexParam(params: unknown[], index: number, name: string, chars?: number): string {
  const value = params[index];
  if (typeof value !== 'string' || !/^([0-9a-fA-F]{2})+$/.test(value) || (chars !== undefined && value.length !== chars)) {
    throw new ElectrumError(RPC_ERRORS.invalidParams, `${name} must be ${chars === undefined ? '' : `${chars} `}hex characters`);
  }
  return value.toLowerCase();
}

/** The hash of the indexed block at `height`, or undefined. */
async function blockHashAt(ctx: ElectrumContext, height: number): Promise<string | undefined> {
  return (await ctx.feed.store.blocks(height, height))[0]?.hash;
}

const sha256d = (data: Buffer): Buffer => createHash('sha256').update(createHash('sha256').update(data).digest()).digest();

/** The merkle branch of the transaction at `pos` among `txids` (display order), as Electrum gives it. */
export function merkleBranch(txids: readonly string[], pos: number): string[] {
  let level: Buffer[] = txids.map((t) => Buffer.from(t, 'hex').reverse());
  const branch: string[] = [];
  for (let i = pos; level.length > 1; i = Math.floor(i / 2)) {
    if (level.length % 2 === 1) level.push(level[level.length - 1]!);
    branch.push(
      Buffer.from(level[i ^ 1]!)
        .reverse()
        .toString('hex'),
    );
    const next: Buffer[] = [];
    for (let j = 0; j < level.length; j += 2) next.push(sha256d(Buffer.concat([level[j]!, level[j + 1]!])));
    level = next;
  }
  return branch;
}

/** The found outputs paying to the script hash, or the documented refusal for any other. */
async function served(ctx: ElectrumContext, params: unknown[]): Promise<Awaited<ReturnType<typeof outputsOf>>> {
  const hash = hexParam(params, 0, 'scripthash', 64);
  const outputs = await outputsOf(ctx.feed.store, byScriptHash(foundByConnection(ctx)).get(hash) ?? []);
  if (outputs.length === 0) {
    throw new ElectrumError(
      RPC_ERRORS.notServed,
      'this server is no address index: it serves only the outputs found by this connection’s silent-payment subscriptions',
    );
  }
  return outputs;
}

/**
 * Pushes the status of each subscribed script hash whose status changed: after each block (a spend)
 * and after each scan round of the connection's silent-payment subscriptions (an output found, or
 * found again at its block's height once its mempool transaction confirmed). Checks run one after
 * the other, so statuses go out in order, and the asks that come while one waits share it.
 */
function watchScriptHashes(ctx: ElectrumContext): Map<string, string | null> {
  const existing = ctx.state.get(SCRIPTHASHES) as Map<string, string | null> | undefined;
  if (existing !== undefined) return existing;
  const statuses = new Map<string, string | null>();
  ctx.state.set(SCRIPTHASHES, statuses);
  const check = async (): Promise<void> => {
    const found = byScriptHash(foundByConnection(ctx));
    for (const hash of [...statuses.keys()]) {
      const { status } = historyOf(await outputsOf(ctx.feed.store, found.get(hash) ?? []));
      if (ctx.closed || status === statuses.get(hash)) continue;
      statuses.set(hash, status);
      await ctx.notify('blockchain.scripthash.subscribe', [hash, status]);
    }
  };
  // A block and each subscription's scan round after it ask at once: one check waiting is enough.
  let checks = Promise.resolve();
  let waiting = false;
  const onChange = (): void => {
    if (waiting) return;
    waiting = true;
    checks = checks
      .then(() => {
        waiting = false;
        return check();
      })
      .catch(() => undefined);
  };
  onFoundChanged(ctx, onChange);
  ctx.feed.events.on('block', onChange);
  ctx.onClose(() => ctx.feed.events.off('block', onChange));
  return statuses;
}

/**
 * What a wallet needs after remote scanning (docs/silent-payments.md, "Remote scanning (Frigate's methods)"): the
 * transactions through the node, fees, headers, and the script-hash methods for the outputs the
 * connection's silent-payment subscriptions found (any other script hash is refused).
 */
export const walletMethods: ElectrumMethods = {
  'blockchain.transaction.get': async (ctx, params) => {
    const txid = hexParam(params, 0, 'tx_hash', 64);
    const verbose = params[1] ?? false;
    if (typeof verbose !== 'boolean') throw new ElectrumError(RPC_ERRORS.invalidParams, 'verbose must be a boolean');
    const found = foundByConnection(ctx).get(txid);
    const blockHash = found === undefined ? undefined : await blockHashAt(ctx, found.height);
    return nodeCall(ctx, 'getrawtransaction', blockHash === undefined ? [txid, verbose] : [txid, verbose, blockHash]);
  },
  'blockchain.transaction.get_merkle': async (ctx, params) => {
    const txid = hexParam(params, 0, 'tx_hash', 64);
    const height = intParam(params, 1, 'height');
    const hash = (await blockHashAt(ctx, height)) ?? (await nodeCall<string>(ctx, 'getblockhash', [height]));
    const block = await nodeCall<{ tx: string[] }>(ctx, 'getblock', [hash, 1]);
    const pos = block.tx.indexOf(txid);
    if (pos === -1) throw new ElectrumError(RPC_ERRORS.notFound, `transaction ${txid} is not in the block at height ${height}`);
    return { block_height: height, merkle: merkleBranch(block.tx, pos), pos };
  },
  'blockchain.transaction.broadcast': async (ctx, params) => nodeCall(ctx, 'sendrawtransaction', [hexParam(params, 0, 'raw_tx')]),
  'blockchain.estimatefee': async (ctx, params) => {
    const target = intParam(params, 0, 'number');
    const answer = await nodeCall<{ feerate?: number }>(ctx, 'estimatesmartfee', [Math.max(1, target)]);
    return answer.feerate ?? -1;
  },
  'blockchain.relayfee': async (ctx) => (await nodeCall<{ relayfee: number }>(ctx, 'getnetworkinfo', [])).relayfee,
  'blockchain.block.headers': async (ctx, params) => {
    const start = intParam(params, 0, 'start_height');
    const count = Math.min(intParam(params, 1, 'count'), MAX_HEADERS);
    if (intParam(params, 2, 'cp_height', 0) !== 0) throw new ElectrumError(RPC_ERRORS.invalidParams, 'cp_height is not supported (0 only)');
    const tip = (await ctx.feed.store.tip())?.height ?? -1;
    const blocks = count === 0 || start > tip ? [] : await ctx.feed.store.blocks(start, Math.min(start + count - 1, tip));
    const headers: string[] = [];
    for (const [i, b] of blocks.entries()) {
      if (b.height !== start + i) break;
      headers.push(Buffer.from(b.header).toString('hex'));
    }
    return { count: headers.length, hex: headers.join(''), max: MAX_HEADERS };
  },
  'blockchain.scripthash.get_history': async (ctx, params) => historyOf(await served(ctx, params)).history,
  'blockchain.scripthash.get_balance': async (ctx, params) => {
    const unspent = (await served(ctx, params)).filter((o) => o.spent === undefined);
    const sum = (outputs: FoundOutput[]): number => Number(outputs.reduce((total, o) => total + o.value, 0n));
    // Electrum's: what confirmed outputs hold, and what the mempool's add.
    return { confirmed: sum(unspent.filter((o) => o.height > 0)), unconfirmed: sum(unspent.filter((o) => o.height === 0)) };
  },
  'blockchain.scripthash.listunspent': async (ctx, params) =>
    (await served(ctx, params))
      .filter((o) => o.spent === undefined)
      .map((o) => ({ tx_hash: o.txid, tx_pos: o.vout, height: o.height, value: Number(o.value) })),
  'blockchain.scripthash.subscribe': async (ctx, params) => {
    const { status } = historyOf(await served(ctx, params));
    watchScriptHashes(ctx).set(hexParam(params, 0, 'scripthash', 64), status);
    return status;
  },
};
