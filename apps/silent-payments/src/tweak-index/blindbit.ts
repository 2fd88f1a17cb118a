import { spentOutpointHashes } from './block-record';
import type { StoredBlock, StoredTx, TweakIndexStore } from './store';

/** BlindBit's filter types (FilterType of blindbit.oracle.v1). */
export const FILTER_TYPES = { spent: 'FILTER_TYPE_SPENT', newUtxos: 'FILTER_TYPE_NEW_UTXOS' } as const;

/** BlindBit's network names (`InfoResponse.network`, `GET /info`): `main` for mainnet, the others as SP_NETWORK spells them. */
export function blindbitNetwork(network: string): string {
  return network === 'mainnet' ? 'main' : network;
}

/** What BlindBit's `GetInfo` and `GET /info` answer for this index. */
export async function blindbitInfo(store: TweakIndexStore, network: string): Promise<Record<string, string | number | boolean>> {
  return {
    network: blindbitNetwork(network),
    height: (await store.tip())?.height ?? 0,
    tweaks_only: false,
    tweaks_full_basic: true,
    tweaks_full_with_dust_filter: true,
    tweaks_cut_through_with_dust_filter: false,
  };
}

/** A height the index does not hold, or a range it cannot serve: the protocol maps it to its error. */
export class IndexRangeError extends Error {
  constructor(
    readonly kind: 'invalid' | 'not-found',
    message: string,
  ) {
    super(message);
  }
}

/** One block as BlindBit's messages carry it, read from the index (docs/silent-payments.md, "BlindBit OracleService"). */
export interface BlindBitBlock {
  block: StoredBlock;
  txs: StoredTx[];
  /** BlindBit's 8-byte hashes of the taproot outpoints the block spends. */
  spentHashes: Buffer[];
}

/** The 33-byte tweaks of a block: all of them, those with an unspent output (cut-through), or those whose largest output reaches `dustLimit`. */
export function tweaksOf(txs: readonly StoredTx[], mode: { cutThrough?: boolean; dustLimit?: bigint } = {}): Buffer[] {
  return txs
    .filter((tx) => !mode.cutThrough || tx.outputs.some((o) => o.spentHeight === null))
    .filter((tx) => mode.dustLimit === undefined || mode.dustLimit === 0n || tx.outputs.some((o) => o.value >= mode.dustLimit!))
    .map((tx) => Buffer.from(tx.tweak));
}

/** BlockIdentifier: the block hash as Bitcoin Core prints it (hex-decoded, not reversed) and the height. */
export function blockIdentifier(block: StoredBlock): { block_hash: Buffer; block_height: number } {
  return { block_hash: Buffer.from(block.hash, 'hex'), block_height: block.height };
}

/** The UTXO messages of a block: every taproot output of its indexed transactions. */
export function utxosOf(b: BlindBitBlock): object[] {
  return b.txs.flatMap((tx) =>
    tx.outputs.map((o) => ({
      txid: Buffer.from(tx.txid, 'hex'),
      vout: o.vout,
      value: Number(o.value),
      script_pub_key: Buffer.concat([Buffer.from([0x51, 0x20]), Buffer.from(o.xonly)]),
      block_height: b.block.height,
      block_hash: Buffer.from(b.block.hash, 'hex'),
      timestamp: b.block.time,
      spent: o.spentHeight !== null,
    })),
  );
}

/** A FilterData message. */
export function filterData(block: StoredBlock, type: keyof typeof FILTER_TYPES): object {
  return {
    blockhash: Buffer.from(block.hash, 'hex'),
    filter_type: FILTER_TYPES[type],
    data: Buffer.from(type === 'spent' ? block.spentFilter : block.newOutputsFilter),
  };
}

/**
 * Checks a range before anything is sent: {@link IndexRangeError} `invalid` when from > to or it
 * is longer than `maxRange`, `not-found` when its ends are outside the indexed heights.
 */
export async function checkRange(store: TweakIndexStore, from: number, to: number, maxRange: number): Promise<void> {
  if (from > to) throw new IndexRangeError('invalid', `start ${from} is above end ${to}`);
  if (to - from + 1 > maxRange) throw new IndexRangeError('invalid', `at most ${maxRange} blocks per request`);
  const [first, tip] = await Promise.all([store.firstHeight(), store.tip()]);
  if (first === undefined || tip === undefined) throw new IndexRangeError('not-found', 'nothing is indexed yet');
  if (from < first) throw new IndexRangeError('not-found', `height ${from} is not indexed`);
  if (to > tip.height) throw new IndexRangeError('not-found', `height ${tip.height + 1} is not indexed`);
}

/**
 * Reads the blocks `from`…`to` for BlindBit's messages. Throws {@link IndexRangeError}:
 * `invalid` when from > to or the range is longer than `maxRange`, `not-found` when a height is
 * not indexed.
 */
export async function readBlindBitBlocks(store: TweakIndexStore, from: number, to: number, maxRange: number): Promise<BlindBitBlock[]> {
  if (from > to) throw new IndexRangeError('invalid', `start ${from} is above end ${to}`);
  if (to - from + 1 > maxRange) throw new IndexRangeError('invalid', `at most ${maxRange} blocks per request`);
  const [blocks, txs, spent] = await Promise.all([store.blocks(from, to), store.txs(from, to), store.spent(from, to)]);
  if (blocks.length !== to - from + 1) {
    const have = new Set(blocks.map((b) => b.height));
    let missing = from;
    while (have.has(missing)) missing += 1;
    throw new IndexRangeError('not-found', `height ${missing} is not indexed`);
  }
  // each block's rows read once, not once a block of the range
  const txsAt = Map.groupBy(txs, (t) => t.height);
  const spentAt = Map.groupBy(spent, (s) => s.height);
  return blocks.map((block) => ({
    block,
    txs: txsAt.get(block.height) ?? [],
    spentHashes: spentOutpointHashes(spentAt.get(block.height) ?? [], block.hash).map((h) => Buffer.from(h)),
  }));
}
