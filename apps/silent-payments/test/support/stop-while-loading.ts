// Child process of scan-pool.test.ts: starts a two-worker scan pool and closes it after 0, 2, …,
// 120 ms, so that some closes come while the workers still load their modules. Prints "closed N"
// and exits 0 when every close ended; a worker terminated mid-load aborts the process instead.
import { randomBytes } from 'node:crypto';
import { loadSecp256k1Backend } from '@repo/bip352';
import { createSilentLogger } from '@repo/service';
import { createScanPool } from '../../src/scan-pool';

const noble = loadSecp256k1Backend('noble');
const scanPriv = new Uint8Array(randomBytes(32));
const spendPub = noble.toCompressed(noble.baseMul(new Uint8Array(randomBytes(32))));

async function main(): Promise<void> {
  let closed = 0;
  for (let delay = 0; delay <= 120; delay += 2) {
    const pool = createScanPool({ workers: 2, scanPriv, spendPub, labels: [0], backend: 'native', logger: createSilentLogger() });
    pool.warm();
    await new Promise((resolve) => setTimeout(resolve, delay));
    await pool.close();
    closed++;
  }
  process.stdout.write(`closed ${closed}\n`);
}

void main();
