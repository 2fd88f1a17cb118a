import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex } from '@repo/crypto';
import { ConfigError } from '@repo/config';
import { createSilentLogger } from '@repo/service';
import { KEY_FILES, loadOrCreateKeys } from '../src/keys';

describe('loadOrCreateKeys', () => {
  let dir: string;
  const logger = createSilentLogger();
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sp-keys-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('generates a key set on first start with the spend secret in its own 0600 file', () => {
    const keys = loadOrCreateKeys({ dataDir: dir, scanKeyHex: undefined, spendPubkeyHex: undefined, logger });
    expect(keys.source).toBe('generated');
    for (const name of Object.values(KEY_FILES)) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    const spendSecret = readFileSync(join(dir, KEY_FILES.spendSecret), 'utf8').trim();
    expect(bytesToHex(secp256k1.getPublicKey(Buffer.from(spendSecret, 'hex'), true))).toBe(bytesToHex(keys.spendPub));
    expect(bytesToHex(secp256k1.getPublicKey(keys.scanPriv, true))).toBe(bytesToHex(keys.scanPub));
  });

  it('loads the stored set on the next start, also once the spend secret was moved offline', () => {
    const first = loadOrCreateKeys({ dataDir: dir, scanKeyHex: undefined, spendPubkeyHex: undefined, logger });
    unlinkSync(join(dir, KEY_FILES.spendSecret));
    const second = loadOrCreateKeys({ dataDir: dir, scanKeyHex: undefined, spendPubkeyHex: undefined, logger });
    expect(second.source).toBe('stored');
    expect(bytesToHex(second.scanPriv)).toBe(bytesToHex(first.scanPriv));
    expect(bytesToHex(second.spendPub)).toBe(bytesToHex(first.spendPub));
  });

  it('refuses half a key set instead of generating a new one', () => {
    loadOrCreateKeys({ dataDir: dir, scanKeyHex: undefined, spendPubkeyHex: undefined, logger });
    unlinkSync(join(dir, KEY_FILES.spendPub));
    expect(() => loadOrCreateKeys({ dataDir: dir, scanKeyHex: undefined, spendPubkeyHex: undefined, logger })).toThrow(ConfigError);
  });

  it('takes the keys from the environment and writes nothing', () => {
    const scan = secp256k1.utils.randomSecretKey();
    const spendPub = secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true);
    const keys = loadOrCreateKeys({ dataDir: dir, scanKeyHex: bytesToHex(scan), spendPubkeyHex: bytesToHex(spendPub), logger });
    expect(keys.source).toBe('env');
    expect(() => statSync(join(dir, KEY_FILES.scanKey))).toThrow();
  });

  it('refuses a scan key out of range and a spend key off the curve', () => {
    const spendPub = bytesToHex(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true));
    expect(() => loadOrCreateKeys({ dataDir: dir, scanKeyHex: 'ff'.repeat(32), spendPubkeyHex: spendPub, logger })).toThrow('SP_SCAN_KEY');
    expect(() => loadOrCreateKeys({ dataDir: dir, scanKeyHex: '11'.repeat(32), spendPubkeyHex: `02${'00'.repeat(31)}05`, logger })).toThrow(
      'SP_SPEND_PUBKEY',
    );
  });

  it('refuses a malformed stored key file', () => {
    loadOrCreateKeys({ dataDir: dir, scanKeyHex: undefined, spendPubkeyHex: undefined, logger });
    writeFileSync(join(dir, KEY_FILES.scanKey), 'not hex');
    expect(() => loadOrCreateKeys({ dataDir: dir, scanKeyHex: undefined, spendPubkeyHex: undefined, logger })).toThrow(ConfigError);
  });
});
