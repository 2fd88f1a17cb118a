import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import type { AeadBackend } from './cipher';
import { assertBytes } from './bytes';
import { KEY_LENGTH, NONCE_LENGTH, TAG_LENGTH } from './constants';

/** The portable backend: pure JavaScript, runs where `node:crypto` is absent. */
export const nobleBackend: AeadBackend = {
  name: 'noble',
  encrypt(key, nonce, plaintext, aad) {
    assertBytes(key, 'key', KEY_LENGTH);
    assertBytes(nonce, 'nonce', NONCE_LENGTH);
    assertBytes(plaintext, 'plaintext');
    return chacha20poly1305(key, nonce, aad).encrypt(plaintext);
  },
  sealEnvelope(key, nonce, plaintext) {
    const body = this.encrypt(key, nonce, plaintext);
    const out = new Uint8Array(NONCE_LENGTH + body.length);
    out.set(nonce, 0);
    out.set(body, NONCE_LENGTH);
    return out;
  },
  decrypt(key, nonce, sealed, aad) {
    assertBytes(key, 'key', KEY_LENGTH);
    assertBytes(nonce, 'nonce', NONCE_LENGTH);
    assertBytes(sealed, 'ciphertext');
    if (sealed.length < TAG_LENGTH) throw new Error('invalid tag');
    try {
      return chacha20poly1305(key, nonce, aad).decrypt(sealed);
    } catch {
      // noble says "invalid tag" too; one message whatever the failure, so nothing leaks.
      throw new Error('invalid tag');
    }
  },
};
