import { createHash } from 'node:crypto';
import type { ElectrumContext } from '../electrum/protocol';
import type { TweakIndexStore } from '../store';
import type { RemoteMatch } from './scan-rows';

/** Electrum's script hash: SHA-256 of the output script, bytes reversed, hex. */
export function scriptHash(script: Uint8Array): string {
  return createHash('sha256').update(script).digest().reverse().toString('hex');
}

/** The script hash of a taproot output of x-only key `xonly` (hex): OP_1 PUSH32 key. */
export function taprootScriptHash(xonly: string): string {
  return scriptHash(Buffer.from(`5120${xonly}`, 'hex'));
}

/** One found output as the script-hash methods read it, its spend followed through the index. */
export interface FoundOutput {
  txid: string;
  vout: number;
  height: number;
  value: bigint;
  /** The spending transaction and its height, when an indexed block spent the output. */
  spent: { txid: string; height: number } | undefined;
}

/** A found output and the transaction that paid it. */
type FoundEntry = readonly [match: RemoteMatch, output: RemoteMatch['outputs'][number]];

/** The outputs of `found` by the script hash they pay (each output's hash computed once). */
export function byScriptHash(found: ReadonlyMap<string, RemoteMatch>): Map<string, FoundEntry[]> {
  const entries = [...found.values()].flatMap((m) => m.outputs.map((o): FoundEntry => [m, o]));
  return Map.groupBy(entries, ([, o]) => taprootScriptHash(o.xonly));
}

/** The found outputs of `entries`, each with its spend as the index knows it now (one lookup an output; none in the mempool). */
export async function outputsOf(store: TweakIndexStore, entries: readonly FoundEntry[]): Promise<FoundOutput[]> {
  const outputs: FoundOutput[] = [];
  for (const [m, o] of entries) {
    const spent = m.height === 0 ? undefined : await store.spendOf(m.height, m.txid, o.vout);
    outputs.push({
      txid: m.txid,
      vout: o.vout,
      height: m.height,
      value: o.value,
      spent: spent && { txid: spent.spender, height: spent.height },
    });
  }
  return outputs;
}

/** Electrum's order of a history: confirmed transactions by height, then the mempool's (height 0). */
function historyOrder(a: { tx_hash: string; height: number }, b: { tx_hash: string; height: number }): number {
  const [ha, hb] = [a.height > 0 ? a.height : Number.MAX_SAFE_INTEGER, b.height > 0 ? b.height : Number.MAX_SAFE_INTEGER];
  return ha - hb || a.tx_hash.localeCompare(b.tx_hash);
}

/** Electrum's history of the outputs (funding and spending transactions; confirmed by height, then the mempool's) and its status hash (null when empty). */
export function historyOf(outputs: readonly FoundOutput[]): { history: Array<{ tx_hash: string; height: number }>; status: string | null } {
  const seen = new Map<string, number>();
  for (const o of outputs) {
    seen.set(o.txid, o.height);
    if (o.spent !== undefined) seen.set(o.spent.txid, o.spent.height);
  }
  const history = [...seen].map(([tx_hash, height]) => ({ tx_hash, height })).sort(historyOrder);
  const status =
    history.length === 0
      ? null
      : createHash('sha256')
          .update(history.map((h) => `${h.tx_hash}:${h.height}:`).join(''))
          .digest('hex');
  return { history, status };
}

/** Where a connection keeps what to run when its subscriptions' found transactions changed (the script-hash watch). */
const FOUND_CHANGED = 'found-changed';

/** Registers `check` to run whenever the connection's found transactions may have changed. */
export function onFoundChanged(ctx: ElectrumContext, check: () => void): void {
  ctx.state.set(FOUND_CHANGED, check);
}

/** Tells the connection its found transactions may have changed (a subscription's scan round ended). */
export function foundChanged(ctx: ElectrumContext): void {
  (ctx.state.get(FOUND_CHANGED) as (() => void) | undefined)?.();
}
