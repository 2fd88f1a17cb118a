import { randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { computeTweaks, loadSecp256k1Backend, type ScanInput } from '@repo/bip352';
import { createTweakWorker } from '../../src/tweak-index/tweak-worker';

/** A P2WPKH input spending `txid:vout` with a fresh key (what BIP-352 reads: the witness's public key). */
function p2wpkhInput(): ScanInput {
  const pub = secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true);
  return {
    txid: randomBytes(32).toString('hex'),
    vout: randomBytes(1)[0]!,
    scriptSig: new Uint8Array(0),
    witness: [Uint8Array.from(randomBytes(71)), pub],
    prevoutScript: Uint8Array.from([0x00, 0x14, ...randomBytes(20)]),
  };
}

/** An input BIP-352 does not read (a P2SH multisig-looking one): a transaction of only those has no tweak. */
function ineligibleInput(): ScanInput {
  return {
    txid: randomBytes(32).toString('hex'),
    vout: 0,
    scriptSig: new Uint8Array(0),
    witness: [],
    prevoutScript: Uint8Array.from([0x00, 0x20, ...randomBytes(32)]),
  };
}

describe('the tweak worker (a block’s tweaks beside the scanner’s thread)', () => {
  it('answers what computeTweaks answers on this thread, call after call, in order', async () => {
    const worker = createTweakWorker();
    try {
      const blocks = Array.from({ length: 3 }, (_, b) =>
        Array.from({ length: 40 + b }, (_, i) => (i % 7 === 3 ? [ineligibleInput()] : Array.from({ length: 1 + (i % 3) }, p2wpkhInput))),
      );
      const answers = await Promise.all(blocks.map((inputs) => worker.compute(inputs)));
      for (const [b, inputs] of blocks.entries()) {
        const here = computeTweaks(inputs, loadSecp256k1Backend());
        expect(answers[b]!.map((t) => (t === null ? null : Buffer.from(t).toString('hex')))).toEqual(
          here.map((t) => (t === null ? null : Buffer.from(t).toString('hex'))),
        );
        expect(here.filter((t) => t === null)).toHaveLength(inputs.filter((i) => i[0]!.witness.length === 0).length);
      }
    } finally {
      await worker.close();
    }
  });

  it('rejects a call it cannot answer, and every call once closed', async () => {
    const worker = createTweakWorker('no-such-backend');
    await expect(worker.compute([[p2wpkhInput()]])).rejects.toThrow(/tweak worker/);
    await worker.close();
    await expect(worker.compute([[p2wpkhInput()]])).rejects.toThrow('tweak worker: closed');
  });
});
