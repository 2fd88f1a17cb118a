import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './support/processes';

// scripts/bench-references.mjs, which the smoke run of `pnpm test` applies to its report: every
// rpc-proxy call against Core carries its references of the same rounds (issue 20).

const HEADING =
  '# rpc-proxy: calls it cannot merge, real Bitcoin Core (16 connections, 1 s per run after a pause of 0.1 s, 1 interleaved rounds)';
const TABLE_HEAD = [
  '| call | backend | to | req/s | of direct | p50 ms | added p50 ms | p99 ms | proxy CPU µs/req | backend CPU µs/req | client CPU µs/req | all CPU µs/req | of direct, CPU-bound |',
  '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
];
/** A call's rows as real-node.mjs writes them, without the rows named in `without`. */
function callRows(call: string, without: string[] = []): string[] {
  const rows = [
    `| ${call} | Core | direct | 29224 (26910.4–32516.8) | | 0 (0–0) | | 1 (1–1) | | 33.8 | 21.5 | 55.3 | |`,
    '| | | proxy | 24219.2 | 84.4 (74.5–86.7) % | 0 (0–0) | 0 (0–0) | 1 (1–2) | 27.6 | 20 | 22.1 | 69.6 | 81.1 % |',
    '| | | bare forwarder (reference) | 14549.6 | 49.8 % | 0 (0–0) | 0 (0–0) | 2 (2–2) | 47.2 | 46.3 | 26.3 | 119.7 | 46.2 % |',
    "| | | the proxy's front end and node client alone | 27630.4 | 94.5 % | 0 (0–0) | 0 (0–0) | 1 (1–1) | 18.8 | 18.4 | 22 | 59.4 | 93.1 % |",
    '| | | bare batching proxy (ceiling) | 32481.6 | 111.1 % | 0 (0–0) | 0 (0–0) | 1 (1–1) | 13.9 | 17.3 | 20.7 | 52.1 | 106.2 % |',
  ];
  return rows.filter((row) => !without.some((label) => row.startsWith(`| | | ${label} |`)));
}
/** The double's rows, which carry no references and must not be taken for Core's. */
const DOUBLE = [
  `| getblockhash, distinct heights | double | direct | 41955.2 | | 0 (0–0) | | 2 (2–2) | | 22.4 | 19.3 | 41.7 | |`,
  '| | | proxy | 24846.4 | 58.4 % | 0 (0–0) | 0 (0–0) | 2 (2–2) | 26.5 | 13.3 | 22.3 | 61.9 | 67.3 % |',
];

describe('the rpc-proxy bench rows against Core and their references (scripts/bench-references.mjs)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-references-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function check(lines: string[]): { status: number | null; stderr: string } {
    const file = join(dir, 'bench-report.md');
    writeFileSync(file, `## apps/rpc-proxy\n\n${lines.join('\n')}\n`);
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'bench-references.mjs'), file], { encoding: 'utf8' });
    return { status: run.status, stderr: run.stderr };
  }

  it('passes a report whose every Core call has the proxy, the forwarder, the layers alone and the ceiling', () => {
    const run = check([HEADING, '', ...TABLE_HEAD, ...callRows('getblockhash, distinct heights'), ...DOUBLE, ...callRows('a write')]);
    expect(run).toEqual({ status: 0, stderr: '' });
  });

  it('names each call that lacks a reference, and what it lacks', () => {
    const run = check([
      HEADING,
      '',
      ...TABLE_HEAD,
      ...callRows('getblockhash, distinct heights', ['bare batching proxy (ceiling)']),
      ...DOUBLE,
      ...callRows('a write', ['bare forwarder (reference)', "the proxy's front end and node client alone"]),
    ]);
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([
      'getblockhash, distinct heights: bare batching proxy (ceiling)',
      "a write: bare forwarder (reference), the proxy's front end and node client alone",
    ]);
  });

  it('fails when the Core table is there but none of its calls can be read (its format changed under the check)', () => {
    const moved = callRows('getblockhash, distinct heights').map((row) => row.replace('| Core | direct |', '| direct | Core |'));
    const run = check([HEADING, '', ...TABLE_HEAD, ...moved]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('the table against Core has no call this check can read');
  });

  it('checks nothing when the bench ran without a Core (only its line saying so)', () => {
    const run = check([
      'rpc-proxy real-node benchmark not run: it needs Bitcoin Core 29.x (BITCOIND=/path/to/bitcoind or bitcoind on PATH)',
      ...DOUBLE,
    ]);
    expect(run).toEqual({ status: 0, stderr: '' });
  });
});
