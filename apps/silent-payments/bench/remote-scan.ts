/**
 * The remote scan of index rows with one wallet's keys (src/tweak-index/remote-scan/scan-rows.ts,
 * `@repo/bip352`'s native backend, on the event loop as the service runs it), next to a reference
 * measured in the same run on the same rows: libsecp256k1 through the `secp256k1` binding doing
 * Frigate's per-row work (tweak·b_scan, the tagged hash with k = 0, t·G, plus B_spend, the 8-byte
 * prefix compared). Rows a second, one core. `REMOTE_SCAN_ROWS` rows (default 20,000).
 */
import { createHash, randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import secp from 'secp256k1';
import { loadSecp256k1Backend } from '@repo/bip352';
import { scanRows } from '../src/tweak-index/remote-scan/scan-rows';
import { readWalletKeys } from '../src/tweak-index/remote-scan/wallet-keys';
import type { StoredTx } from '../src/tweak-index/store';

const ROWS = Number(process.env.REMOTE_SCAN_ROWS ?? 20_000);
const ROUNDS = 3;
const TAG = createHash('sha256').update('BIP0352/SharedSecret').digest();

const randomKey = (): Uint8Array => {
  for (;;) {
    const k = Uint8Array.from(randomBytes(32));
    if (secp.privateKeyVerify(k)) return k;
  }
};

const scanPriv = randomKey();
const spendPub = secp.publicKeyCreate(randomKey(), true);
const rows: StoredTx[] = Array.from({ length: ROWS }, (_, i) => ({
  height: 1,
  txid: i.toString(16).padStart(64, '0'),
  tweak: secp.publicKeyCreate(randomKey(), true),
  outputs: [0, 1].map((vout) => ({ vout, value: 1000n, xonly: Uint8Array.from(randomBytes(32)), spentHeight: null })),
}));

/** Frigate's per-row work through libsecp256k1: the count of rows whose P_0 prefix is among the outputs'. */
function reference(): number {
  let hits = 0;
  const zero = Buffer.alloc(4);
  for (const row of rows) {
    const ecdh = secp.publicKeyTweakMul(row.tweak, scanPriv, true);
    const t = createHash('sha256').update(TAG).update(TAG).update(ecdh).update(zero).digest();
    const p = secp.publicKeyCombine([spendPub, secp.publicKeyCreate(t, true)], true);
    const prefix = Buffer.from(p.subarray(1, 9));
    if (row.outputs.some((o) => prefix.equals(o.xonly.subarray(0, 8)))) hits += 1;
  }
  return hits;
}

function ours(): number {
  const backend = loadSecp256k1Backend('native');
  const keys = readWalletKeys([Buffer.from(scanPriv).toString('hex'), Buffer.from(spendPub).toString('hex')], [], 'regtest', backend);
  return scanRows(backend, keys, rows).length;
}

const rate = (work: () => number): number => {
  const t = process.hrtime.bigint();
  work();
  return ROWS / (Number(process.hrtime.bigint() - t) / 1e9);
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const results = { ours: [] as number[], reference: [] as number[] };
for (let r = 0; r < ROUNDS; r += 1) {
  results.reference.push(rate(reference));
  results.ours.push(rate(ours));
}
const [o, ref] = [median(results.ours), median(results.reference)];
console.log(`${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ${ROWS} rows, median of ${ROUNDS}, one core`);
console.log('| scan | rows/s |');
console.log('| --- | ---: |');
console.log(`| remote scan (native backend, one thread) | ${Math.round(o)} |`);
console.log(`| reference: libsecp256k1 via secp256k1, Frigate's per-row work | ${Math.round(ref)} |`);
console.log(`| ratio | ${(o / ref).toFixed(2)} |`);
