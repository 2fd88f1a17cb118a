import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { VectorCase } from '../../src/vectors';

/** The official BIP-352 vectors (a copy of bitcoin/bips bip-0352/send_and_receive_test_vectors.json, v1.1). */
export function loadOfficialVectors(): VectorCase[] {
  return JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'send_and_receive_test_vectors.json'), 'utf8')) as VectorCase[];
}

/** The recording of a real Bitcoin Core 29.2 answer to getblock verbosity 3 (regtest block 112). */
function coreBlockFixture(): { request: { id: string }; body: { result: unknown }; body_raw: string } {
  return JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'core-getblock-verbosity3.json'), 'utf8'));
}

/** That answer's block, parsed. */
export function loadCoreBlock(): {
  tx: { txid: string; vin: unknown[]; vout: { n: number; scriptPubKey: { hex: string; type: string } }[] }[];
} {
  return coreBlockFixture().body.result as ReturnType<typeof loadCoreBlock>;
}

/** The same answer as the node sent it: the body's bytes as text, and the id of the call. */
export function loadCoreBlockAnswer(): { body: string; id: string } {
  const fixture = coreBlockFixture();
  return { body: fixture.body_raw, id: fixture.request.id };
}
