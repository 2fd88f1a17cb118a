import { runVectors } from '../src/vectors';
import type { BackendName } from '../src/backend';
import { loadOfficialVectors } from './support/helpers';

const cases = loadOfficialVectors();
const BACKENDS: BackendName[] = ['noble', 'native', 'wasm'];

describe('official BIP-352 vectors', () => {
  it('holds every case of the file, sending and receiving', () => {
    expect(cases.length).toBeGreaterThanOrEqual(28);
    expect(cases.some((c) => /K_max/.test(c.comment))).toBe(true);
  });

  describe.each(BACKENDS)('on the %s backend', (backend) => {
    it.each(cases.map((c) => [c.comment, c] as const))('passes "%s"', (_comment, testCase) => {
      const results = runVectors([testCase], [backend]);
      expect(results.length).toBe(testCase.sending.length + testCase.receiving.length);
      expect(results.filter((r) => !r.ok)).toEqual([]);
    });
  });
});

describe('runVectors', () => {
  it('reports a tampered expectation as a failure', () => {
    const tampered = structuredClone(cases[0]!);
    tampered.sending[0]!.expected.outputs = [['00'.repeat(32)]];
    tampered.receiving[0]!.expected.outputs![0]!.priv_key_tweak = '00'.repeat(32);
    const results = runVectors([tampered], ['noble']);
    expect(results.map((r) => r.ok)).toEqual([false, false]);
  });
});
