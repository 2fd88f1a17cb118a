// Compiles the whole-transaction scanner addon (native/scan.c, with the libsecp256k1 source the
// `secp256k1` package ships) and puts it at dist/native/bip352_scan.node, where
// src/backends/native.ts loads it. Needs what node-gyp needs: python3, make and a C compiler.
// Node's own headers are used when they sit beside the running node (distribution packages and
// the official tarballs install them there), so nothing is downloaded.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, '..');
const native = join(pkg, 'native');
const require = createRequire(import.meta.url);
const nodeGyp = require.resolve('node-gyp/bin/node-gyp.js');

const prefix = resolve(process.execPath, '..', '..');
const args = [nodeGyp, 'rebuild', '--directory', native];
if (existsSync(join(prefix, 'include', 'node', 'node_api.h'))) args.push(`--nodedir=${prefix}`);
const started = Date.now();
const run = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
if (run.status !== 0) {
  process.stderr.write(run.stdout + run.stderr);
  process.stderr.write('\n@repo/bip352: building the native scanner failed (node-gyp needs python3, make and a C compiler)\n');
  process.exit(1);
}
mkdirSync(join(pkg, 'dist', 'native'), { recursive: true });
copyFileSync(join(native, 'build', 'Release', 'bip352_scan.node'), join(pkg, 'dist', 'native', 'bip352_scan.node'));
console.log(`@repo/bip352: native scanner built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
