import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, hexToBytes, keyFingerprint } from '@repo/crypto';
import { ConfigError } from '@repo/config';
import { writeSecretFile, type Logger } from '@repo/service';

/** File names under DATA_DIR of a generated key set. */
export const KEY_FILES = {
  scanKey: 'scan.key',
  spendPub: 'spend.pub',
  /** The spend secret: written once, for the operator to move offline. */
  spendSecret: 'spend.secret',
} as const;

/** The keys the service works with (BIP-352: b_scan, B_scan, B_spend). Never the spend secret. */
export interface ServiceKeys {
  scanPriv: Uint8Array;
  scanPub: Uint8Array;
  spendPub: Uint8Array;
  /** `env` (SP_SCAN_KEY/SP_SPEND_PUBKEY), `stored` (DATA_DIR) or `generated` (this start). */
  source: 'env' | 'stored' | 'generated';
}

/** Options of {@link loadOrCreateKeys}. */
export interface LoadKeysOptions {
  dataDir: string;
  scanKeyHex: string | undefined;
  spendPubkeyHex: string | undefined;
  logger: Logger;
}

/** Throws a ConfigError unless `scan` is a valid secp256k1 secret key and `spend` a compressed point. */
export function assertKeyPair(scan: Uint8Array, spend: Uint8Array, names: { scan: string; spend: string }): void {
  if (scan.length !== 32 || !secp256k1.utils.isValidSecretKey(scan)) {
    throw new ConfigError(`${names.scan} is not a valid secp256k1 private key`);
  }
  if (spend.length !== 33 || (spend[0] !== 2 && spend[0] !== 3) || !secp256k1.utils.isValidPublicKey(spend, true)) {
    throw new ConfigError(`${names.spend} is not a valid compressed secp256k1 public key`);
  }
}

function readHexFile(path: string, bytes: number): Uint8Array {
  const text = readFileSync(path, 'utf8').trim();
  if (!new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(text)) {
    throw new ConfigError(`${path} must hold ${bytes * 2} hex characters`);
  }
  return hexToBytes(text.toLowerCase());
}

/** Keys read or generated, and the writing of a generated set (nothing to write otherwise). */
export interface PendingKeys {
  keys: ServiceKeys;
  /** Writes a generated key set to DATA_DIR (once); a no-op for keys from the environment or DATA_DIR. */
  persist: () => void;
}

/**
 * Returns the scan private key and spend public key: from the environment when set, else from
 * DATA_DIR, else generates a key set there on first start (scan key and spend public key with
 * mode 0600, and the spend secret in its own 0600 file that the operator should move offline:
 * BIP-352 receiving needs only b_scan and B_spend). Keys are logged by fingerprint only.
 * Throws a ConfigError when the keys are invalid or DATA_DIR holds half a key set.
 */
export function loadOrCreateKeys(options: LoadKeysOptions): ServiceKeys {
  const pending = readOrGenerateKeys(options);
  pending.persist();
  return pending.keys;
}

/**
 * As {@link loadOrCreateKeys}, without writing: a generated set is written by `persist()`
 * (an app's `start()`), so building the app writes no file.
 */
export function readOrGenerateKeys(options: LoadKeysOptions): PendingKeys {
  const { dataDir, logger } = options;
  const scanPath = join(dataDir, KEY_FILES.scanKey);
  const spendPubPath = join(dataDir, KEY_FILES.spendPub);
  const spendSecretPath = join(dataDir, KEY_FILES.spendSecret);
  let scanPriv: Uint8Array;
  let spendPub: Uint8Array;
  let source: ServiceKeys['source'];
  let persist: (() => void) | undefined;
  if (options.scanKeyHex !== undefined && options.spendPubkeyHex !== undefined) {
    scanPriv = hexToBytes(options.scanKeyHex);
    spendPub = hexToBytes(options.spendPubkeyHex);
    assertKeyPair(scanPriv, spendPub, { scan: 'SP_SCAN_KEY', spend: 'SP_SPEND_PUBKEY' });
    source = 'env';
  } else if (existsSync(scanPath) || existsSync(spendPubPath)) {
    // Half a key set is an operator mistake: generating a new one would hide every payment.
    if (!existsSync(scanPath) || !existsSync(spendPubPath)) {
      throw new ConfigError(
        `DATA_DIR holds only one of ${KEY_FILES.scanKey} and ${KEY_FILES.spendPub}; restore the other or set SP_SCAN_KEY and SP_SPEND_PUBKEY`,
      );
    }
    scanPriv = readHexFile(scanPath, 32);
    spendPub = readHexFile(spendPubPath, 33);
    assertKeyPair(scanPriv, spendPub, { scan: scanPath, spend: spendPubPath });
    if ((statSync(scanPath).mode & 0o077) !== 0) {
      logger.warn({ path: scanPath }, 'the scan key file is readable by other users: chmod 600 it');
    }
    source = 'stored';
  } else {
    scanPriv = secp256k1.utils.randomSecretKey();
    const spendPriv = secp256k1.utils.randomSecretKey();
    spendPub = secp256k1.getPublicKey(spendPriv, true);
    const generated = { scanPriv, spendPub };
    persist = () => {
      // The secret first: if the process dies in between, no key set exists without its secret.
      writeSecretFile(spendSecretPath, `${bytesToHex(spendPriv)}\n`);
      writeSecretFile(scanPath, `${bytesToHex(generated.scanPriv)}\n`);
      writeSecretFile(spendPubPath, `${bytesToHex(generated.spendPub)}\n`);
      spendPriv.fill(0);
      logger.warn(
        { path: spendSecretPath, spend_pubkey_fingerprint: keyFingerprint(generated.spendPub) },
        'generated a new silent-payment key set; the spend secret is needed only to spend: move this file offline (backup) and delete it here',
      );
    };
    source = 'generated';
  }
  if (source !== 'generated' && existsSync(spendSecretPath)) {
    logger.warn({ path: spendSecretPath }, 'the spend secret is still in DATA_DIR: the service never needs it, move it offline');
  }
  const scanPub = secp256k1.getPublicKey(scanPriv, true);
  logger.info(
    { source, scan_key_fingerprint: keyFingerprint(scanPriv), spend_pubkey_fingerprint: keyFingerprint(spendPub) },
    'silent-payment keys loaded',
  );
  return {
    keys: { scanPriv, scanPub, spendPub, source },
    persist: () => {
      const write = persist;
      persist = undefined;
      write?.();
    },
  };
}
