/**
 * The remote scan of index rows with one wallet's keys, as the service runs it (the scan pool's
 * worker threads, src/tweak-index/remote-scan/scan-pool.ts: `@repo/bip352`'s receiver, native
 * backend), next to a reference measured in the same run on the same rows: libsecp256k1 through
 * the `secp256k1` binding doing Frigate's per-row work (tweak·b_scan, the tagged hash with k = 0,
 * t·G, plus B_spend, the 8-byte prefix compared), on one core. Rows a second.
 * `REMOTE_SCAN_ROWS` rows (default 40,000); the pool with 1 worker and with one a core.
 */
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import secp from 'secp256k1';
import { loadSecp256k1Backend } from '@repo/bip352';
import { createRemoteScanPool } from '../src/tweak-index/remote-scan/scan-pool';
import { readWalletKeys } from '../src/tweak-index/remote-scan/wallet-keys';
import type { StoredTx } from '../src/tweak-index/store';

const ROWS = Number(process.env.REMOTE_SCAN_ROWS ?? 40_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Rows of one job, as the service queues them (subscription.ts's ROW_CHUNK). */
const JOB_ROWS = 512;
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

/** The rows through a pool of `workers`, in jobs of JOB_ROWS queued at once, as a subscription's page. */
async function ours(workers: number): Promise<number> {
  const pool = createRemoteScanPool({ workers });
  const keys = readWalletKeys(
    [Buffer.from(scanPriv).toString('hex'), Buffer.from(spendPub).toString('hex')],
    [],
    'regtest',
    loadSecp256k1Backend(),
  );
  const owner = {};
  // the workers' start (loading the library) is not the scan's: one small job first
  await pool.scan(owner, keys, rows.slice(0, workers * 8), false);
  const t = process.hrtime.bigint();
  const jobs: Array<Promise<unknown[]>> = [];
  for (let i = 0; i < rows.length; i += JOB_ROWS) jobs.push(pool.scan(owner, keys, rows.slice(i, i + JOB_ROWS), false));
  await Promise.all(jobs);
  const seconds = Number(process.hrtime.bigint() - t) / 1e9;
  await pool.close();
  return ROWS / seconds;
}

function timed(work: () => number): number {
  const t = process.hrtime.bigint();
  work();
  return ROWS / (Number(process.hrtime.bigint() - t) / 1e9);
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const cores = availableParallelism();
  const results = { one: [] as number[], all: [] as number[], reference: [] as number[] };
  for (let r = 0; r < ROUNDS; r += 1) {
    results.reference.push(timed(reference));
    results.one.push(await ours(1));
    if (cores > 1) results.all.push(await ours(cores));
  }
  const [one, ref] = [median(results.one), median(results.reference)];
  const lines = [
    '## remote scan of index rows',
    '',
    `${cpus()[0]?.model ?? 'cpu'}, ${cores} cores, Node ${process.version}, ${ROWS} rows, median of ${ROUNDS}`,
    '',
    '| scan | rows/s | against the reference |',
    '| --- | ---: | ---: |',
    `| remote scan, scan pool of 1 worker | ${Math.round(one)} | ${(one / ref).toFixed(2)} |`,
  ];
  if (cores > 1) {
    const all = median(results.all);
    lines.push(`| remote scan, scan pool of ${cores} workers | ${Math.round(all)} | ${(all / ref).toFixed(2)} |`);
  }
  lines.push(`| reference: libsecp256k1 via secp256k1, Frigate's per-row work, one core | ${Math.round(ref)} | 1.00 |`, '');
  console.log(lines.join('\n'));
  // After the catch-up's (bench-report.md, written first by `npm run bench`).
  appendFileSync(join(__dirname, '..', 'bench-report.md'), `\n${lines.join('\n')}`);
}

void main();
