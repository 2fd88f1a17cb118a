import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// `@repo/bip352/scan` (README, "Entry points"): the receiving side for threads that only scan.
// Each case loads the built package in a fresh Node process (jest's own module registry would
// hide what Node loads) and lists the dependency modules it brought in.
const PACKAGE = join(__dirname, '..');

interface Loaded {
  exports: Record<string, string>;
  dependencies: string[];
  sameReceiver: boolean;
}

function load(specifier: string): Loaded {
  const script = `
    const entry = require(${JSON.stringify(specifier)});
    const exports = Object.fromEntries(Object.entries(entry).map(([k, v]) => [k, typeof v]));
    const dependencies = [...new Set(Object.keys(require.cache)
      .map((file) => /node_modules\\/((?:@[^/]+\\/)?[^/@]+)\\//.exec(file.split('node_modules/.pnpm/').pop())?.[1])
      .filter(Boolean))].sort();
    const sameReceiver = entry.createReceiver === require('@repo/bip352').createReceiver;
    process.stdout.write(JSON.stringify({ exports, dependencies, sameReceiver }));
  `;
  const run = spawnSync(process.execPath, ['-e', script], { cwd: PACKAGE, encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as Loaded;
}

describe('@repo/bip352/scan', () => {
  it('exports the receiving side, the same functions as the main entry', () => {
    const scan = load('@repo/bip352/scan');
    for (const name of ['createReceiver', 'loadSecp256k1Backend', 'packBlockAnswer', 'SilentPaymentError']) {
      expect(scan.exports[name]).toBe('function');
    }
    expect(scan.exports.DEFAULT_BACKEND).toBe('string');
    expect(scan.sameReceiver).toBe(true);
  });

  it('loads neither @noble/curves nor @scure/base, which the main entry loads', () => {
    const scan = load('@repo/bip352/scan');
    expect(scan.dependencies).not.toContain('@noble/curves');
    expect(scan.dependencies).not.toContain('@scure/base');
    // the comparison that makes the test mean something: the whole package does load them
    const main = load('@repo/bip352');
    expect(main.dependencies).toEqual(expect.arrayContaining(['@noble/curves', '@scure/base']));
  });
});
