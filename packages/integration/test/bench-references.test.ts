import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './support/processes';

// scripts/bench-references.mjs, which the smoke run of `pnpm test` applies to its report: each of
// issue 20's rows carries the reference measured in the same run. The reports below are cut from
// a real `pnpm bench` report (2026-12-05), in the formats the benches write.

const CONFIG_SERVER = [
  '| measure | figure | reference (same run) | ratio | target |',
  '| --- | --- | --- | --- | --- |',
  '| GET /<env>/<file>, 4 KB with substitution (req/s, median of 5 alternating rounds) | 13376 | express hello over the same TLS: 10466 | 127 % (rounds 124–133 %) | ≥ 80 % |',
  '|   latency p50 / p99 (ms) | 3 / 7 | hello: 4 / 11 |  |  |',
];

const HEADING =
  '# rpc-proxy: the proxy, a bare forwarder and direct Core, real Bitcoin Core (16 connections, 1 s per run after a pause of 0.1 s, 1 interleaved rounds)';
const TABLE_HEAD = [
  '| call | backend | to | req/s | of direct | p50 ms | added p50 ms | p99 ms | added p99 ms | server CPU µs/req | node CPU µs/req |',
  '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
];
/** A call's rows as real-node.mjs writes them, without the rows named in `without`. */
function callRows(call: string, without: string[] = []): string[] {
  const rows = [
    `| ${call} | Core | direct | 29224 (26910.4–32516.8) | | 0 (0–0) | | 1 (1–1) | | | 33.8 |`,
    '| | | proxy | 24219.2 | 84.4 (74.5–86.7) % | 0 (0–0) | 0 (0–0) | 1 (1–2) | 0 (0–1) | 27.6 | 20 |',
    '| | | bare forwarder (reference) | 14549.6 | 49.8 % | 0 (0–0) | 0 (0–0) | 2 (2–2) | 1 (1–1) | 47.2 | 46.3 |',
  ];
  return rows.filter((row) => !without.some((label) => row.startsWith(`| | | ${label} |`)));
}
/** Rows of another backend, which carry no references and must not be taken for Core's. */
const DOUBLE = [
  `| getblockhash, distinct heights | double | direct | 41955.2 | | 0 (0–0) | | 2 (2–2) | | | 22.4 |`,
  '| | | proxy | 24846.4 | 58.4 % | 0 (0–0) | 0 (0–0) | 2 (2–2) | 0 (0–0) | 26.5 | 13.3 |',
];
/** real-node.mjs's table of the targets, one row a call. */
const PER_CALL = [
  'Targets (issue 63):',
  '',
  '| call | proxy / bare forwarder | added p50 ms | added p99 ms |',
  '|---|---:|---:|---:|',
  '| getblockhash, distinct heights | 166.5 (160–170) % | 0 (0–0) | 1 (0–1) |',
  '| a write | 120.1 % | 0 | 1 |',
];
const CORE_TABLE = [HEADING, '', ...TABLE_HEAD, ...callRows('getblockhash, distinct heights'), ...DOUBLE, ...callRows('a write')];
const RPC_PROXY = [...CORE_TABLE, '', ...PER_CALL];

const SILENT_PAYMENTS = [
  '# silent-payments catch-up benchmark',
  '',
  '| scan | catch-up (ms) | range (ms) | node alone (ms, median of all) | node alone / catch-up, paired | range | ≥ 0.90 |',
  '|---|---:|---:|---:|---:|---:|:-:|',
  '| main thread | 1039 | 1007–1055 | 976 | 0.94 | 0.92–1.02 | yes |',
  '',
  '| index store | catch-up (ms) | range (ms) | node alone / catch-up, paired | range | ≥ 0.90 | bytes stored per indexed transaction |',
  '|---|---:|---:|---:|---:|:-:|---:|',
  '| SQLite | 1101 | 1050–1130 | 0.91 | 0.88–0.95 | yes | 293 |',
  '| PostgreSQL | 1290 | 1200–1330 | 0.78 | 0.75–0.80 | no | 541 |',
];

const BIP352 = [
  '# BIP-352 scan benchmark',
  '',
  '| backend | labels | scan (tx/s CPU) | scan range (CPU) | cost of the labels (time vs change only, paired rounds) | the same in runs of 64 (scanTransactions) | scan / tight |',
  '|---|---|---:|---:|---:|---:|---:|',
  '| native | change only | 20,430 | 17,669–20,544 | — | — | 91.9 % |',
  '| native | change + 1,000 | 20,076 | 19,712–20,209 | 3.6 % | 11.0 % | 92.8 % |',
  '| native | change + 100,000 | 19,820 | 19,714–20,174 | 2.3 % | 12.4 % | 91.7 % |',
  '| wasm | change + 1,000 | 2,400 | 2,079–2,422 | 25.2 % | — | 100.6 % |',
  '',
  'K_max worst case, native:',
  '',
  '| labels | ms a scan (CPU) | range (ms) |',
  '|---|---:|---:|',
  '| change only | 21.9 | 17.0–30.0 |',
  '| change + 1,000 | 20.1 | 16.7–22.9 |',
  '| change + 100,000 | 18.4 | 16.9–22.4 |',
];

type Sections = Record<string, string[]>;
const SECTIONS: Sections = {
  'apps/config-server': CONFIG_SERVER,
  'apps/rpc-proxy': RPC_PROXY,
  'apps/silent-payments': SILENT_PAYMENTS,
  'packages/bip352': BIP352,
};

/** `lines` with the line that starts with `start` replaced by `by(line)` (dropped when it returns undefined). */
function edit(lines: string[], start: string, by: (line: string) => string | undefined): string[] {
  if (lines.filter((line) => line.startsWith(start)).length !== 1) throw new Error(`not one line starts with ${start}`);
  return lines.flatMap((line) => (line.startsWith(start) ? (by(line) ?? []) : [line]));
}

describe("issue 20's bench rows and their references of the same run (scripts/bench-references.mjs)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-references-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs the check on a root report made of `SECTIONS` with `changes` applied (a section given as undefined is left out). */
  function check(changes: Partial<Record<string, string[] | undefined>> = {}, renamed: Record<string, string> = {}) {
    const sections = { ...SECTIONS, ...changes };
    const report = ['# Benchmark report', ''];
    for (const [name, lines] of Object.entries(sections)) {
      if (lines !== undefined) report.push(`## ${renamed[name] ?? name}`, '', ...lines, '');
    }
    const file = join(dir, 'bench-report.md');
    writeFileSync(file, report.join('\n'));
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'bench-references.mjs'), file], { encoding: 'utf8' });
    return { status: run.status, gaps: run.stderr.trim() === '' ? [] : run.stderr.trim().split('\n') };
  }

  it('passes a report whose every row has its reference', () => {
    expect(check()).toEqual({ status: 0, gaps: [] });
  });

  describe('the rpc-proxy', () => {
    it('names each call against Core that lacks a reference, and what it lacks', () => {
      const rows = [
        HEADING,
        '',
        ...TABLE_HEAD,
        ...callRows('getblockhash, distinct heights', ['bare forwarder (reference)']),
        ...DOUBLE,
        ...callRows('a write', ['proxy', 'bare forwarder (reference)']),
        '',
        ...PER_CALL,
      ];
      expect(check({ 'apps/rpc-proxy': rows })).toEqual({
        status: 1,
        gaps: [
          'apps/rpc-proxy: getblockhash, distinct heights: bare forwarder (reference)',
          'apps/rpc-proxy: a write: proxy, bare forwarder (reference)',
        ],
      });
    });

    it('fails when the Core table is there but none of its calls can be read (its format changed under the check)', () => {
      const moved = callRows('getblockhash, distinct heights').map((row) => row.replace('| Core | direct |', '| direct | Core |'));
      expect(check({ 'apps/rpc-proxy': [HEADING, '', ...TABLE_HEAD, ...moved] })).toEqual({
        status: 1,
        gaps: ['apps/rpc-proxy: the table against Core has no call this check can read'],
      });
    });

    it('checks no Core row when the bench says it ran without a Core', () => {
      const notRun = 'rpc-proxy real-node benchmark not run: it needs Bitcoin Core 29.x (BITCOIND=/path/to/bitcoind or bitcoind on PATH)';
      expect(check({ 'apps/rpc-proxy': [notRun, '', ...DOUBLE] })).toEqual({ status: 0, gaps: [] });
    });

    it('fails when the section has neither the Core table nor the line saying why not', () => {
      expect(check({ 'apps/rpc-proxy': DOUBLE })).toEqual({
        status: 1,
        gaps: ['apps/rpc-proxy: neither the table against Core nor the line saying it was not run'],
      });
    });
  });

  /** One row or table of a section broken, and the gaps the check must name for it. */
  const broken: [string, string, string[], string[]][] = [
    [
      'a Core call missing from the targets table',
      'apps/rpc-proxy',
      [...CORE_TABLE, '', ...edit(PER_CALL, '| a write |', () => undefined)],
      ['apps/rpc-proxy: a write: no row in the targets table'],
    ],
    [
      'a targets row without its throughput against the bare forwarder',
      'apps/rpc-proxy',
      [...CORE_TABLE, '', ...edit(PER_CALL, '| getblockhash', (l) => l.replace('166.5 (160–170) %', '–'))],
      ['apps/rpc-proxy: getblockhash, distinct heights: proxy / bare forwarder: "–"'],
    ],
    [
      "the config server's file beside another reference than the express hello",
      'apps/config-server',
      edit(CONFIG_SERVER, '| GET /<env>/<file>, 4 KB', (l) => l.replace('express hello over the same TLS', 'express hello')),
      ['apps/config-server: the 4 KB file: reference (same run): "express hello: 10466", not the express hello over the same TLS'],
    ],
    [
      "the config server's file without its ratio",
      'apps/config-server',
      edit(CONFIG_SERVER, '| GET /<env>/<file>, 4 KB', (l) => l.replace('127 % (rounds 124–133 %)', '')),
      ['apps/config-server: the 4 KB file: ratio: ""'],
    ],
    [
      "the config server's file row missing",
      'apps/config-server',
      edit(CONFIG_SERVER, '| GET /<env>/<file>, 4 KB', () => undefined),
      ['apps/config-server: no row for GET /<env>/<file>, 4 KB with substitution'],
    ],
    [
      'a catch-up without the node serving the same blocks alone',
      'apps/silent-payments',
      edit(SILENT_PAYMENTS, '| main thread |', (l) => l.replace('| 976 | 0.94 |', '| | 0.94 |')),
      ['apps/silent-payments: catch-up: node alone (ms, median of all): ""'],
    ],
    [
      'no catch-up row',
      'apps/silent-payments',
      edit(SILENT_PAYMENTS, '| main thread |', () => undefined),
      ['apps/silent-payments: no catch-up row'],
    ],
    [
      'no catch-up with the index on',
      'apps/silent-payments',
      SILENT_PAYMENTS.slice(0, 5),
      ['apps/silent-payments: no catch-up table with the index on (index store, catch-up, node alone / catch-up, bytes)'],
    ],
    [
      'the index on SQLite without its bytes a transaction',
      'apps/silent-payments',
      edit(SILENT_PAYMENTS, '| SQLite |', (l) => l.replace('| 293 |', '| – |')),
      ['apps/silent-payments: index on SQLite: bytes stored per indexed transaction: "–"'],
    ],
    [
      "the catch-up table's ratio column renamed",
      'apps/silent-payments',
      edit(SILENT_PAYMENTS, '| scan |', (l) => l.replace('node alone / catch-up, paired', 'ratio')),
      ['apps/silent-payments: no catch-up table (catch-up, node alone, their ratio)'],
    ],
    [
      "a labelled native row without the labels' cost in runs",
      'packages/bip352',
      edit(BIP352, '| native | change + 100,000 |', (l) => l.replace('| 12.4 % |', '| — |')),
      ['packages/bip352: native, change + 100,000: the same in runs of 64 (scanTransactions): "—"'],
    ],
    [
      'no change-only native row to compare with',
      'packages/bip352',
      edit(BIP352, '| native | change only |', () => undefined),
      ['packages/bip352: native: no change-only row (the reference)'],
    ],
    [
      'no native row with 1,000 labels',
      'packages/bip352',
      edit(BIP352, '| native | change + 1,000 |', () => undefined),
      ['packages/bip352: native: no row for change + 1,000'],
    ],
    [
      'no K_max row with 100,000 labels',
      'packages/bip352',
      edit(BIP352, '| change + 100,000 | 18.4 |', () => undefined),
      ['packages/bip352: K_max: no row for change + 100,000'],
    ],
  ];

  it.each(broken)('fails on %s, naming it', (_what, section, lines, gaps) => {
    expect(check({ [section]: lines })).toEqual({ status: 1, gaps });
  });

  it('fails when a section is missing, or is the report of an earlier run', () => {
    expect(check({ 'packages/bip352': undefined })).toEqual({ status: 1, gaps: ['packages/bip352: no section in the report'] });
    expect(check({}, { 'apps/silent-payments': 'apps/silent-payments (report from an earlier run)' })).toEqual({
      status: 1,
      gaps: ['apps/silent-payments: its report is from an earlier run'],
    });
  });
});
