import { encodeSilentPaymentAddress, type AnySecp256k1Backend } from '@repo/bip352';
import type { IndexNetwork } from '../chain-params';
import { ElectrumError, RPC_ERRORS } from '../electrum/protocol';

/** Labels a subscription may ask, 0 to 2^31 - 1 (0, the change label, is scanned anyway). */
const MAX_LABEL = 0x7fffffff;
/** secp256k1's group order n. */
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * One wallet's keys as a subscription holds them, in memory for the connection only
 * (docs/silent-payments.md, "Remote scanning (Frigate's methods)"): never written, never logged;
 * a scan takes a copy to its worker for the job's length; `wipe()` zeroes them.
 */
export interface WalletKeys {
  /** b_scan, 32 bytes. */
  readonly scanPriv: Uint8Array;
  /** B_spend, 33 bytes compressed. */
  readonly spendPub: Uint8Array;
  /** The labels m asked besides the change label (m = 0, always scanned). */
  readonly labels: readonly number[];
  /** The silent-payment address of (B_scan, B_spend): what the methods answer with. */
  readonly address: string;
  wipe(): void;
}

function hexParam(value: unknown, chars: number, name: string): Buffer {
  if (typeof value !== 'string' || value.length !== chars || !/^[0-9a-fA-F]+$/.test(value)) {
    throw new ElectrumError(RPC_ERRORS.invalidParams, `${name} must be ${chars} hex characters`);
  }
  return Buffer.from(value, 'hex');
}

/** The label integers of the optional fourth parameter: distinct integers 0…2^31-1, at most `maxLabels`. */
export function labelsParam(value: unknown, maxLabels: number): number[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((m) => typeof m !== 'number' || !Number.isSafeInteger(m) || m < 0 || m > MAX_LABEL)) {
    throw new ElectrumError(RPC_ERRORS.invalidParams, 'labels must be an array of integers 0 to 2147483647');
  }
  const labels = [...new Set(value as number[])];
  if (labels.length > maxLabels) throw new ElectrumError(RPC_ERRORS.invalidParams, `more than ${maxLabels} labels`);
  return labels;
}

/**
 * Reads (scan_private_key, spend_public_key) and the labels into {@link WalletKeys}. The error
 * messages name the parameter, never its value.
 * @throws {ElectrumError} invalid params for keys that are not a valid scalar / curve point.
 */
export function readWalletKeys(
  params: unknown[],
  labels: readonly number[],
  network: IndexNetwork,
  backend: AnySecp256k1Backend,
): WalletKeys {
  const scanPriv = hexParam(params[0], 64, 'scan_private_key');
  const spendPub = hexParam(params[1], 66, 'spend_public_key');
  if (backend.pointFromCompressed(spendPub) === null)
    throw new ElectrumError(RPC_ERRORS.invalidParams, 'spend_public_key is not a curve point');
  const scalar = BigInt(`0x${scanPriv.toString('hex')}`);
  if (scalar === 0n || scalar >= CURVE_ORDER) throw new ElectrumError(RPC_ERRORS.invalidParams, 'scan_private_key is not a valid scalar');
  const scanPub = backend.toCompressed(backend.baseMul(scanPriv));
  return {
    scanPriv,
    spendPub,
    labels: labels.filter((m) => m !== 0),
    address: encodeSilentPaymentAddress(scanPub, spendPub, network),
    wipe() {
      scanPriv.fill(0);
      spendPub.fill(0);
    },
  };
}
