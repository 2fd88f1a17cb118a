'use strict';
// Memory a receiver holds per label, for bench/bench.ts, which runs this in a new process for
// each backend: `node --expose-gc bench/memory.cjs <backend> <labels>` prints one JSON row. Plain
// JavaScript on the build (dist/), so that neither the benchmarks run before it (what they freed)
// nor a TypeScript compiler in the process (its garbage) moves the process's resident size.
const { createHash } = require('node:crypto');
const { join } = require('node:path');
const dist = join(__dirname, '..', 'dist');
const { createReceiver } = require(join(dist, 'receiver.js'));
const { loadSecp256k1Backend } = require(join(dist, 'load-backend.js'));

const [name, count] = process.argv.slice(2);
const labelCount = Number(count);
if (typeof globalThis.gc !== 'function' || !name || !(labelCount > 0)) {
  process.stderr.write('usage: node --expose-gc bench/memory.cjs <backend> <labels>\n');
  process.exit(2);
}
const seeded = (label, i) => createHash('sha256').update(`${label}/${i}`).digest();
const backend = loadSecp256k1Backend(name);
const scanPriv = seeded('scan', 0);
const spendPub = backend.toCompressed(backend.baseMul(seeded('spend', 0)));
const labels = Array.from({ length: labelCount }, (_, i) => i + 1);
const used = () => {
  globalThis.gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external, rss: m.rss };
};
createReceiver({ scanPriv, spendPub, labels: [1], backend }); // module and table set-up paid before
const before = used();
const receiver = createReceiver({ scanPriv, spendPub, labels, backend });
const after = used();
if (receiver.labels().length !== labelCount + 1) throw new Error('labels lost');
const row = {
  backend: name,
  labels: labelCount,
  heapPerLabel: (after.heap - before.heap) / labelCount,
  rssPerLabel: (after.rss - before.rss) / labelCount,
};
// A receiver holds something for each label: a figure of none or less is a measurement gone wrong
// (as the −124 bytes a label measured at the end of a whole run), which fails the bench, and with
// it the smoke run of `pnpm test`, rather than being printed.
if (!(row.heapPerLabel > 0 && row.rssPerLabel > 0)) throw new Error(`not a measurement: ${JSON.stringify(row)}`);
process.stdout.write(JSON.stringify(row));
