#!/usr/bin/env node
// The rpc-proxy's rows against real Core (issue 20) each come with the references measured in the
// same rounds (apps/rpc-proxy/bench/real-node.mjs): this checks a report's rpc-proxy section for
// them. bench-smoke.mjs runs it on every smoke run; `node scripts/bench-references.mjs <report>`
// checks a report file (exit 1 and one line a call that lacks one).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The rows each call against Core must have beside its direct one (the labels real-node.mjs writes). */
export const CORE_REFERENCES = [
  'proxy',
  'bare forwarder (reference)',
  "the proxy's front end and node client alone",
  'bare batching proxy (ceiling)',
];

/** The heading of real-node.mjs's table: present whenever it ran against a Core (absent when it found none). */
const CORE_TABLE = '# rpc-proxy: calls it cannot merge, real Bitcoin Core';

/**
 * What `section` (the rpc-proxy's part of a report) lacks: one entry a call against Core that
 * lacks a reference row, naming them, and one when the Core table is there but no call of it
 * could be read (its format changed under this check). None when the bench ran without a Core.
 */
export function callsWithoutReferences(section) {
  const calls = [];
  // The rows of one call follow its direct row, with their first three cells empty.
  let current;
  for (const line of section.split('\n')) {
    if (current !== undefined && line.startsWith('| | | ')) {
      current.rows.add(line.split('|')[3].trim());
      continue;
    }
    const direct = /^\| ([^|]+) \| Core \| direct \|/.exec(line);
    current = direct ? { name: direct[1], rows: new Set() } : undefined;
    if (current !== undefined) calls.push(current);
  }
  if (calls.length === 0) return section.includes(CORE_TABLE) ? ['the table against Core has no call this check can read'] : [];
  return calls
    .map(({ name, rows }) => [name, CORE_REFERENCES.filter((r) => !rows.has(r))])
    .filter(([, lacking]) => lacking.length > 0)
    .map(([name, lacking]) => `${name}: ${lacking.join(', ')}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (file === undefined) {
    console.error('usage: node scripts/bench-references.mjs <bench-report.md>');
    process.exit(2);
  }
  const lacking = callsWithoutReferences(readFileSync(file, 'utf8'));
  for (const line of lacking) console.error(line);
  process.exit(lacking.length > 0 ? 1 : 0);
}
