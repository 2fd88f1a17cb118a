/**
 * `npm run vectors -- FILE [--backend native|wasm|noble|all]`: runs a BIP-352 vector file (the
 * schema of send_and_receive_test_vectors.json), prints each failure, and ends with
 * `N passed, M failed`; exit status 1 on any failure.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { handleCommandLine, packageVersion, type CommandSpec } from '@repo/config';
import { BACKEND_NAMES, isBackendName, type BackendName } from '../backend';
import { runVectors, type VectorCase } from '../vectors';

function main(argv: string[]): number {
  const files: string[] = [];
  let backends: readonly BackendName[] = BACKEND_NAMES;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--backend') {
      const value = argv[++i];
      if (value === 'all') backends = BACKEND_NAMES;
      else if (value !== undefined && isBackendName(value)) backends = [value];
      else {
        console.error(`--backend expects ${BACKEND_NAMES.join(', ')} or all, got ${String(value)}`);
        return 2;
      }
    } else files.push(arg);
  }
  if (files.length === 0) {
    console.error('usage: npm run vectors -- FILE [--backend native|wasm|noble|all]');
    return 2;
  }
  // npm runs scripts in the package folder; a relative path is meant from where npm was called
  const base = process.env['INIT_CWD'] ?? process.cwd();
  let passed = 0;
  let failed = 0;
  for (const file of files) {
    const cases = JSON.parse(readFileSync(resolve(base, file), 'utf8')) as VectorCase[];
    for (const result of runVectors(cases, backends)) {
      if (result.ok) passed++;
      else {
        failed++;
        console.log(`FAIL [${result.backend}] ${result.name}: ${result.error}`);
      }
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

const COMMAND: CommandSpec = {
  name: 'bip352-vectors',
  version: packageVersion(join(__dirname, '..', '..', 'package.json')),
  summary: 'runs BIP-352 test vector files; exit status 1 on any failure',
  usage: ['FILE... [--backend native|wasm|noble|all]'],
  options: [{ flag: '--backend <name>', description: 'native, wasm, noble or all (default all)' }],
  env: [
    {
      name: 'INIT_CWD',
      default: 'the current folder',
      description: 'where relative FILE paths start (npm sets it to where npm was called)',
    },
  ],
  positionals: 'any',
};

handleCommandLine(COMMAND);
process.exitCode = main(process.argv.slice(2));
