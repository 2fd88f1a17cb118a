import type { AnySecp256k1Backend } from '@repo/bip352';
import type { StoredTx } from '../store';
import { sharedSecretTweak, type WalletKeys } from './wallet-keys';

/** An indexed transaction that pays the wallet: Frigate's history entry, with the outputs found. */
export interface RemoteMatch {
  height: number;
  txid: string;
  /** The outputs of the transaction that pay the wallet (vout, x-only key hex, sats). */
  outputs: Array<{ vout: number; xonly: string; value: bigint }>;
}

/**
 * Scans index rows with one wallet's keys (BIP-352 "Scanning" from the served tweak): ecdh =
 * b_scan·tweak, then for k = 0, 1, … P_k = B + t_k·G for B_spend and each labelled B_m, while
 * some output's x-only key equals one of them. Rows whose tweak is no curve point are skipped.
 */
export function scanRows(backend: AnySecp256k1Backend, keys: WalletKeys, txs: readonly StoredTx[]): RemoteMatch[] {
  const matches: RemoteMatch[] = [];
  for (const tx of txs) {
    const tweak: unknown = backend.pointFromCompressed(tx.tweak);
    if (tweak === null || keys.spendPoints.length === 0) continue;
    const ecdh = backend.toCompressed(backend.mul(tweak, keys.scanPriv));
    const left = new Set(tx.outputs);
    const found: RemoteMatch['outputs'] = [];
    for (let k = 0; left.size > 0; k += 1) {
      const tG: unknown = backend.baseMul(sharedSecretTweak(ecdh, k));
      let hit = false;
      for (const spend of keys.spendPoints) {
        const p: unknown = backend.add(spend, tG);
        if (p === null) continue;
        for (const o of left) {
          if (!backend.xEquals(p, o.xonly)) continue;
          found.push({ vout: o.vout, xonly: Buffer.from(o.xonly).toString('hex'), value: o.value });
          left.delete(o);
          hit = true;
          break;
        }
      }
      if (!hit) break;
    }
    if (found.length > 0) matches.push({ height: tx.height, txid: tx.txid, outputs: found.sort((a, b) => a.vout - b.vout) });
  }
  return matches;
}
