import { secp256k1 } from '@noble/curves/secp256k1.js';
import * as btc from '@scure/btc-signer';
import { taprootTweakPrivKey } from '@scure/btc-signer/utils.js';
import {
  GENESIS,
  GENESIS_COINBASE_HEX,
  blockSubsidy,
  blockWork,
  buildCoinbase,
  headerHash,
  merkleRoot,
  mineHeader,
  serializeBlock,
  type BlockHeader,
} from './block';
import { bytesToHex, compactSize, hexToBytes } from './encoding';
import { ADDRESS_PARAMS, scriptToAddress, type AddressParams } from './script';
import { decodeTx, type Coin, type DecodedTx } from './tx';

/** The chains the double can pretend to be. */
export type ChainName = 'regtest' | 'signet';

/** Output kinds {@link Chain.fund} can create. */
export type FundKind = 'p2tr' | 'p2wpkh' | 'p2sh-p2wpkh' | 'p2pkh';

/** A confirmed, spendable output made by {@link Chain.fund}. */
export interface FundedOutput {
  txid: string;
  vout: number;
  /** Value in satoshis. */
  amount: bigint;
  /** The output script (scriptPubKey). */
  script: Uint8Array;
  /**
   * The private key that controls `script`. For `p2tr` this is the BIP-86 tweaked key, whose
   * x-only public key is the output key in the script (what BIP-352 senders use); the
   * untweaked internal key is in `internalKey`.
   */
  privateKey: Uint8Array;
  /** Compressed public key of `privateKey` (33 bytes). */
  publicKey: Uint8Array;
  kind: FundKind;
  address: string;
  /** The whole funding transaction (a P2PKH spender needs it as `nonWitnessUtxo`). */
  txHex: string;
  /** Block hash and height the funding transaction is mined in. */
  blockHash: string;
  height: number;
  /** P2SH-P2WPKH: the redeem script (the P2WPKH program). */
  redeemScript?: Uint8Array;
  /** P2TR: the x-only internal key (32 bytes) for `tapInternalKey`. */
  internalKey?: Uint8Array;
  /** P2TR: the untweaked internal private key. */
  internalPrivateKey?: Uint8Array;
}

/** A refusal with Bitcoin Core's RPC error code and message. */
export class ChainError extends Error {
  override readonly name = 'ChainError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** A block as the double keeps it: header, transactions and undo data. */
export interface BlockRecord {
  hash: string;
  header: BlockHeader;
  height: number;
  txs: DecodedTx[];
  /** Spent coins per transaction (empty for the coinbase), for fees and `prevout`. */
  undo: Coin[][];
  hex: string;
  size: number;
  strippedSize: number;
  weight: number;
  chainwork: bigint;
  mediantime: number;
}

/** A mempool entry. */
export interface MempoolEntry {
  tx: DecodedTx;
  fee: bigint;
  coins: Coin[];
  time: number;
  height: number;
}

/** Options of {@link Chain}. */
export interface ChainOptions {
  chain?: ChainName;
  /** Blocks mined at start so coinbase outputs are mature (default 101; `fund` mines more when needed). */
  initialBlocks?: number;
  /** Clock in seconds, for block times. */
  now?: () => number;
}

const REGTEST_BITS = 0x207fffff;
const COINBASE_MATURITY = 100;
const HALVING_INTERVAL = 150;
const FUND_FEE = 2_000n;
const DUST = 546n;
const MAX_MONEY = 21_000_000n * 100_000_000n;

function outpoint(txid: string, vout: number): string {
  return `${txid}:${vout}`;
}

function btcNetwork(params: AddressParams) {
  return { bech32: params.bech32, pubKeyHash: params.pubKeyHash, scriptHash: params.scriptHash, wif: 0xef };
}

/**
 * The chain state of the double: blocks (with real merkle roots, witness commitments and
 * proof of work on regtest's trivial target), the UTXO set, a transaction index and a
 * mempool, all built from real transactions. Coinbases pay a key of the double (its "miner
 * wallet"), which `fund` spends with @scure/btc-signer.
 */
export class Chain {
  readonly name: ChainName;
  readonly params: AddressParams;
  readonly blocks = new Map<string, BlockRecord>();
  readonly active: BlockRecord[] = [];
  readonly utxos = new Map<string, Coin>();
  readonly txIndex = new Map<string, string>();
  readonly mempool = new Map<string, MempoolEntry>();
  private readonly spentByMempool = new Map<string, string>();
  private readonly minerKey: Uint8Array;
  readonly minerScript: Uint8Array;
  private readonly now: () => number;
  private extraNonce = 0;
  /** The genesis coinbase txid (Core refuses to return it). */
  readonly genesisCoinbaseTxid: string;

  constructor(options: ChainOptions = {}) {
    this.name = options.chain ?? 'regtest';
    this.params = ADDRESS_PARAMS[this.name];
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.minerKey = secp256k1.utils.randomSecretKey();
    this.minerScript = btc.p2wpkh(secp256k1.getPublicKey(this.minerKey, true), btcNetwork(this.params)).script;
    const coinbase = decodeTx(GENESIS_COINBASE_HEX);
    this.genesisCoinbaseTxid = coinbase.txid;
    const g = GENESIS[this.name];
    const header: BlockHeader = {
      version: g.version,
      prev: '0'.repeat(64),
      merkleRoot: coinbase.txid,
      time: g.time,
      bits: g.bits,
      nonce: g.nonce,
    };
    this.connect(this.record(header, [coinbase], [[]], 0, 0n));
    const initial = options.initialBlocks ?? 101;
    if (initial > 0) this.mine(initial);
  }

  /** The tip. */
  get tip(): BlockRecord {
    return this.active[this.active.length - 1] as BlockRecord;
  }

  /** Height of the tip. */
  tipHeight(): number {
    return this.tip.height;
  }

  /** Hash of the tip. */
  tipHash(): string {
    return this.tip.hash;
  }

  /** Whether `hash` is a block of the active chain. */
  isActive(block: BlockRecord): boolean {
    return this.active[block.height] === block;
  }

  /** Median time past of the last 11 blocks ending at `height` (Core's GetMedianTimePast). */
  medianTimePast(height: number): number {
    const times: number[] = [];
    for (let h = height; h >= 0 && times.length < 11; h--) times.push((this.active[h] as BlockRecord).header.time);
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)] as number;
  }

  private record(header: BlockHeader, txs: DecodedTx[], undo: Coin[][], height: number, prevWork: bigint): BlockRecord {
    const bytes = serializeBlock(header, txs);
    const strippedSize = 80 + compactSize(txs.length).length + txs.reduce((s, t) => s + t.strippedSize, 0);
    return {
      hash: headerHash(header),
      header,
      height,
      txs,
      undo,
      hex: bytesToHex(bytes),
      size: bytes.length,
      strippedSize,
      weight: strippedSize * 3 + bytes.length,
      chainwork: prevWork + blockWork(header.bits),
      mediantime: 0,
    };
  }

  /** Connects `block` on top of the tip: spends its inputs, adds its outputs, indexes it. */
  private connect(block: BlockRecord): void {
    this.blocks.set(block.hash, block);
    this.active.push(block);
    block.mediantime = this.medianTimePast(block.height);
    if (block.height === 0) return; // Core never adds the genesis outputs to the UTXO set
    for (const tx of block.txs) {
      if (!tx.isCoinbase) for (const inp of tx.inputs) this.utxos.delete(outpoint(inp.txid, inp.vout));
      tx.outputs.forEach((o, n) => {
        if (o.script[0] === 0x6a) return; // OP_RETURN outputs are unspendable, never in the UTXO set
        this.utxos.set(outpoint(tx.txid, n), { value: o.value, script: o.script, height: block.height, coinbase: tx.isCoinbase });
      });
      this.txIndex.set(tx.txid, block.hash);
      this.removeFromMempool(tx.txid, false);
    }
    // Mempool transactions that now conflict with the block go, with their descendants.
    for (const tx of block.txs) {
      if (tx.isCoinbase) continue;
      for (const inp of tx.inputs) {
        const spender = this.spentByMempool.get(outpoint(inp.txid, inp.vout));
        if (spender !== undefined) this.removeFromMempool(spender, true);
      }
    }
  }

  /** Disconnects the tip; returns its non-coinbase transactions. */
  private disconnectTip(): DecodedTx[] {
    const block = this.tip;
    if (block.height === 0) throw new RangeError('cannot disconnect the genesis block');
    for (let i = block.txs.length - 1; i >= 0; i--) {
      const tx = block.txs[i] as DecodedTx;
      tx.outputs.forEach((_, n) => this.utxos.delete(outpoint(tx.txid, n)));
      if (!tx.isCoinbase) {
        tx.inputs.forEach((inp, j) => {
          const coin = block.undo[i]?.[j];
          if (coin) this.utxos.set(outpoint(inp.txid, inp.vout), coin);
        });
      }
      if (this.txIndex.get(tx.txid) === block.hash) this.txIndex.delete(tx.txid);
    }
    this.active.pop();
    return block.txs.filter((t) => !t.isCoinbase);
  }

  private removeFromMempool(txid: string, withDescendants: boolean): void {
    const entry = this.mempool.get(txid);
    if (!entry) return;
    this.mempool.delete(txid);
    for (const inp of entry.tx.inputs) {
      const key = outpoint(inp.txid, inp.vout);
      if (this.spentByMempool.get(key) === txid) this.spentByMempool.delete(key);
    }
    if (withDescendants) {
      entry.tx.outputs.forEach((_, n) => {
        const child = this.spentByMempool.get(outpoint(txid, n));
        if (child !== undefined) this.removeFromMempool(child, true);
      });
    }
  }

  /** The coin an input spends: confirmed, or an output of a mempool transaction (height -1). */
  private findCoin(txid: string, vout: number, useMempool: boolean): Coin | undefined {
    const coin = this.utxos.get(outpoint(txid, vout));
    if (coin) return coin;
    if (!useMempool) return undefined;
    const parent = this.mempool.get(txid)?.tx.outputs[vout];
    return parent ? { value: parent.value, script: parent.script, height: 0x7fffffff, coinbase: false } : undefined;
  }

  /** Decodes raw hex as Core's DecodeHexTx does for sendrawtransaction. */
  static decodeRaw(hex: string): DecodedTx {
    try {
      if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new RangeError('not hex');
      return decodeTx(hex);
    } catch {
      throw new ChainError(-22, 'TX decode failed. Make sure the tx has at least one input.');
    }
  }

  /** Context-free and UTXO checks of a transaction for block height `height` (Core's CheckTransaction and CheckTxInputs). */
  private checkInputs(
    tx: DecodedTx,
    height: number,
    lookup: (txid: string, vout: number) => Coin | undefined,
  ): { coins: Coin[]; fee: bigint } {
    if (tx.isCoinbase) throw new ChainError(-26, 'coinbase');
    const seen = new Set<string>();
    for (const inp of tx.inputs) {
      const key = outpoint(inp.txid, inp.vout);
      if (seen.has(key)) throw new ChainError(-26, 'bad-txns-inputs-duplicate');
      seen.add(key);
    }
    let valueOut = 0n;
    for (const o of tx.outputs) {
      if (o.value > MAX_MONEY) throw new ChainError(-26, 'bad-txns-vout-toolarge');
      valueOut += o.value;
    }
    if (valueOut > MAX_MONEY) throw new ChainError(-26, 'bad-txns-txouttotal-toolarge');
    const coins: Coin[] = [];
    for (const inp of tx.inputs) {
      const coin = lookup(inp.txid, inp.vout);
      if (!coin) throw new ChainError(-25, 'bad-txns-inputs-missingorspent');
      if (coin.coinbase && height - coin.height < COINBASE_MATURITY) {
        throw new ChainError(-26, `bad-txns-premature-spend-of-coinbase, tried to spend coinbase at depth ${height - coin.height}`);
      }
      coins.push(coin);
    }
    const valueIn = coins.reduce((s, c) => s + c.value, 0n);
    if (valueIn < valueOut) {
      throw new ChainError(-26, `bad-txns-in-belowout, value in (${formatBtc(valueIn)}) < value out (${formatBtc(valueOut)})`);
    }
    return { coins, fee: valueIn - valueOut };
  }

  /**
   * Accepts a raw transaction into the mempool, with sendrawtransaction's answers: -22 not
   * decodable, -25 missing or spent inputs, -26 rejected (conflict, immature coinbase, value
   * out above value in, fee rate above `maxFeeRate` BTC/kvB), -27 already confirmed.
   * A transaction already in the mempool is accepted again and its txid returned.
   */
  sendRawTransaction(hex: string, maxFeeRate = 0.1): string {
    const tx = Chain.decodeRaw(hex);
    if (this.mempool.has(tx.txid)) return tx.txid;
    if (tx.outputs.some((_, n) => this.utxos.has(outpoint(tx.txid, n)))) {
      throw new ChainError(-27, 'Transaction outputs already in utxo set');
    }
    for (const inp of tx.inputs) {
      if (this.spentByMempool.has(outpoint(inp.txid, inp.vout))) throw new ChainError(-26, 'txn-mempool-conflict');
    }
    const { coins, fee } = this.checkInputs(tx, this.tipHeight() + 1, (txid, vout) => this.findCoin(txid, vout, true));
    if (maxFeeRate > 0 && Number(fee) / tx.vsize > maxFeeRate * 1e5) {
      throw new ChainError(-25, 'Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)');
    }
    this.addToMempool(tx, fee, coins);
    return tx.txid;
  }

  private addToMempool(tx: DecodedTx, fee: bigint, coins: Coin[]): void {
    this.mempool.set(tx.txid, { tx, fee, coins, time: this.now(), height: this.tipHeight() });
    for (const inp of tx.inputs) this.spentByMempool.set(outpoint(inp.txid, inp.vout), tx.txid);
  }

  /**
   * Builds, mines and connects one block: `txs` first (checked against the UTXO set and the
   * block so far; mempool transactions they conflict with are evicted), then, when
   * `withMempool`, every mempool transaction whose inputs are still available.
   */
  private mineOne(txs: DecodedTx[], withMempool: boolean, fresh: boolean): BlockRecord {
    const tip = this.tip;
    const height = tip.height + 1;
    const created = new Map<string, Coin>();
    const spent = new Set<string>();
    const lookup = (txid: string, vout: number): Coin | undefined => {
      const key = outpoint(txid, vout);
      if (spent.has(key)) return undefined;
      return created.get(key) ?? this.utxos.get(key);
    };
    const chosen: DecodedTx[] = [];
    const undo: Coin[][] = [[]];
    let fees = 0n;
    const take = (tx: DecodedTx, coins: Coin[], fee: bigint) => {
      for (const inp of tx.inputs) spent.add(outpoint(inp.txid, inp.vout));
      tx.outputs.forEach((o, n) => created.set(outpoint(tx.txid, n), { value: o.value, script: o.script, height, coinbase: false }));
      chosen.push(tx);
      undo.push(coins);
      fees += fee;
    };
    for (const tx of txs) {
      if (this.txIndex.has(tx.txid) && tx.outputs.some((_, n) => this.utxos.has(outpoint(tx.txid, n)))) {
        throw new ChainError(-27, 'Transaction outputs already in utxo set');
      }
      const { coins, fee } = this.checkInputs(tx, height, lookup);
      take(tx, coins, fee);
    }
    if (withMempool) {
      for (const entry of this.mempool.values()) {
        if (chosen.some((t) => t.txid === entry.tx.txid)) continue;
        try {
          const { coins, fee } = this.checkInputs(entry.tx, height, lookup);
          take(entry.tx, coins, fee);
        } catch {
          // conflicts with a given transaction: left out, evicted when the block connects
        }
      }
    }
    const coinbase = this.buildCoinbaseFor(height, this.minerScript, blockSubsidy(height, HALVING_INTERVAL) + fees, chosen, fresh);
    const all = [coinbase, ...chosen];
    const time = Math.max(this.medianTimePast(tip.height) + 1, this.now());
    const header = mineHeader({
      version: 0x20000000,
      prev: tip.hash,
      merkleRoot: merkleRoot(all.map((t) => t.txid)),
      time,
      bits: REGTEST_BITS,
      nonce: 0,
    });
    const block = this.record(header, all, undo, height, tip.chainwork);
    this.connect(block);
    return block;
  }

  private buildCoinbaseFor(height: number, script: Uint8Array, value: bigint, txs: DecodedTx[], fresh: boolean): DecodedTx {
    const wtxids = txs.map((t) => t.hash);
    if (fresh) return buildCoinbase(height, script, value, wtxids);
    // A replacement block at a height already used: an extra nonce keeps its coinbase (and hash) distinct.
    this.extraNonce++;
    return buildCoinbase(height, script, value, wtxids, this.extraNonce);
  }

  /**
   * Mines `count` blocks (default 1): the first holds the mempool transactions and `txHexes`
   * (decoded, checked; a bad one throws ChainError and nothing is mined). Returns the hashes.
   */
  mine(count = 1, txHexes: string[] = []): string[] {
    if (!Number.isInteger(count) || count < 0) throw new RangeError('"count" expected a non-negative integer');
    const txs = txHexes.map((h) => Chain.decodeRaw(h));
    const hashes: string[] = [];
    for (let i = 0; i < count; i++) hashes.push(this.mineOne(i === 0 ? txs : [], true, true).hash);
    return hashes;
  }

  /**
   * Replaces the last `depth` blocks with `depth + 1` new ones (so the new branch has more
   * work). The first new block holds `replacementTxHexes` only; the transactions of the
   * replaced blocks return to the mempool (as Core does), where the next `mine` picks them up
   * unless a replacement spent their inputs. Returns the hashes of the new blocks.
   */
  reorg(depth: number, replacementTxHexes: string[] = []): string[] {
    if (!Number.isInteger(depth) || depth < 1 || depth > this.tipHeight()) {
      throw new RangeError(`"depth" expected an integer from 1 to ${this.tipHeight()}`);
    }
    const replacements = replacementTxHexes.map((h) => Chain.decodeRaw(h));
    const returned: DecodedTx[] = [];
    for (let i = 0; i < depth; i++) returned.unshift(...this.disconnectTip());
    const previous = [...this.mempool.values()].map((e) => e.tx);
    this.mempool.clear();
    this.spentByMempool.clear();
    const hashes: string[] = [];
    for (let i = 0; i <= depth; i++) hashes.push(this.mineOne(i === 0 ? replacements : [], false, false).hash);
    for (const tx of [...returned, ...previous]) {
      try {
        this.sendRawTransaction(tx.hex, 0);
      } catch {
        // spent by a replacement (or its parent is gone): dropped, as Core drops conflicts
      }
    }
    return hashes;
  }

  /** A mature, unreserved coin of the miner wallet worth at least `value`, mining blocks until one exists. */
  private minerCoin(value: bigint): { txid: string; vout: number; coin: Coin } {
    for (let attempt = 0; attempt < 2; attempt++) {
      const next = this.tipHeight() + 1;
      for (const [key, coin] of this.utxos) {
        if (coin.value < value || coin.script.length !== this.minerScript.length) continue;
        if (bytesToHex(coin.script) !== bytesToHex(this.minerScript)) continue;
        if (coin.coinbase && next - coin.height < COINBASE_MATURITY) continue;
        if (this.spentByMempool.has(key)) continue;
        const [txid, vout] = key.split(':') as [string, string];
        return { txid, vout: Number(vout), coin };
      }
      this.mine(COINBASE_MATURITY + 1);
    }
    throw new RangeError(`the miner wallet has no coin of ${value} sats`);
  }

  /**
   * Creates a fresh key of `kind` and a confirmed output paying it `amountSats` (default
   * 1 BTC): a transaction signed with @scure/btc-signer spending a mature coin of the miner
   * wallet, mined alone in a new block (mempool transactions stay where they are).
   */
  fund(kind: FundKind, amountSats = 100_000_000n): FundedOutput {
    if (typeof amountSats !== 'bigint' || amountSats < DUST) throw new RangeError('"amountSats" expected a bigint of at least 546');
    const net = btcNetwork(this.params);
    const priv = secp256k1.utils.randomSecretKey();
    const pub = secp256k1.getPublicKey(priv, true);
    let script: Uint8Array;
    let privateKey = priv;
    let extra: Partial<FundedOutput> = {};
    switch (kind) {
      case 'p2wpkh':
        script = btc.p2wpkh(pub, net).script;
        break;
      case 'p2pkh':
        script = btc.p2pkh(pub, net).script;
        break;
      case 'p2sh-p2wpkh': {
        const inner = btc.p2wpkh(pub, net);
        script = btc.p2sh(inner, net).script;
        extra = { redeemScript: inner.script };
        break;
      }
      case 'p2tr': {
        const internalKey = pub.subarray(1);
        script = btc.p2tr(internalKey, undefined, net).script;
        privateKey = taprootTweakPrivKey(priv);
        extra = { internalKey, internalPrivateKey: priv };
        break;
      }
      default:
        throw new RangeError(`"kind" expected p2tr, p2wpkh, p2sh-p2wpkh or p2pkh, got ${String(kind)}`);
    }
    const { txid, vout, coin } = this.minerCoin(amountSats + FUND_FEE + DUST);
    const tx = new btc.Transaction({ allowUnknownOutputs: true });
    tx.addInput({ txid, index: vout, witnessUtxo: { script: coin.script, amount: coin.value } });
    tx.addOutput({ script, amount: amountSats });
    tx.addOutput({ script: this.minerScript, amount: coin.value - amountSats - FUND_FEE });
    tx.sign(this.minerKey);
    tx.finalize();
    const decoded = decodeTx(tx.hex);
    const block = this.mineOne([decoded], false, true);
    return {
      txid: decoded.txid,
      vout: 0,
      amount: amountSats,
      script,
      privateKey,
      publicKey: secp256k1.getPublicKey(privateKey, true),
      kind,
      address: scriptToAddress(script, this.params) as string,
      txHex: decoded.hex,
      blockHash: block.hash,
      height: block.height,
      ...extra,
    };
  }

  /** A block by hash (active or stale). */
  getBlock(hash: string): BlockRecord | undefined {
    return this.blocks.get(hash.toLowerCase());
  }

  /** The spendable and immature balance of the miner wallet, and its unconfirmed incoming value. */
  minerBalances(): { trusted: bigint; immature: bigint; pending: bigint; txcount: number } {
    const minerHex = bytesToHex(this.minerScript);
    const next = this.tipHeight() + 1;
    let trusted = 0n;
    let immature = 0n;
    const txids = new Set<string>();
    for (const [key, coin] of this.utxos) {
      if (bytesToHex(coin.script) !== minerHex) continue;
      txids.add(key.split(':')[0] as string);
      if (this.spentByMempool.has(key)) continue;
      if (coin.coinbase && next - coin.height < COINBASE_MATURITY) immature += coin.value;
      else trusted += coin.value;
    }
    let pending = 0n;
    for (const entry of this.mempool.values()) {
      entry.tx.outputs.forEach((o) => {
        if (bytesToHex(o.script) === minerHex) {
          pending += o.value;
          txids.add(entry.tx.txid);
        }
      });
    }
    return { trusted, immature, pending, txcount: txids.size };
  }

  /** Raw bytes of a hex string, for callers outside. */
  static bytes(hex: string): Uint8Array {
    return hexToBytes(hex);
  }
}

function formatBtc(sats: bigint): string {
  const whole = sats / 100_000_000n;
  const frac = (sats % 100_000_000n).toString().padStart(8, '0').replace(/0+$/, '');
  return frac === '' ? `${whole}` : `${whole}.${frac}`;
}
