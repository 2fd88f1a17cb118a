import { createHash, randomBytes } from 'node:crypto';
import { taggedHash, type Bip352Tag } from '../src/hash';

/** BIP-340 tagged hash through node:crypto, the reference. */
function reference(tag: string, ...parts: Uint8Array[]): string {
  const tagHash = createHash('sha256').update(tag, 'utf8').digest();
  const h = createHash('sha256').update(tagHash).update(tagHash);
  for (const part of parts) h.update(part);
  return h.digest('hex');
}

describe('taggedHash', () => {
  const tags: Bip352Tag[] = ['BIP0352/Inputs', 'BIP0352/SharedSecret', 'BIP0352/Label'];

  it('equals SHA256(SHA256(tag) || SHA256(tag) || message) for every length 0..300', () => {
    for (let length = 0; length <= 300; length++) {
      const tag = tags[length % 3]!;
      const message = new Uint8Array(randomBytes(length));
      expect(Buffer.from(taggedHash(tag, message)).toString('hex')).toBe(reference(tag, message));
    }
  });

  it('hashes several parts as their concatenation, and returns a fresh array each time', () => {
    const parts = [randomBytes(36), randomBytes(33), randomBytes(4)].map((b) => new Uint8Array(b));
    const first = taggedHash('BIP0352/Inputs', ...parts);
    const second = taggedHash('BIP0352/Inputs', parts[0]!, parts[1]!);
    expect(Buffer.from(first).toString('hex')).toBe(reference('BIP0352/Inputs', ...parts));
    expect(Buffer.from(second).toString('hex')).toBe(reference('BIP0352/Inputs', parts[0]!, parts[1]!));
    expect(taggedHash('BIP0352/Label')).not.toBe(taggedHash('BIP0352/Label'));
  });
});
