import { decodeSilentPaymentAddress, type Network, hrpForNetwork } from './address';
import type { AnySecp256k1Backend } from './backend';
import { loadSecp256k1Backend } from './load-backend';
import { assertBytes, bytesToHex, ser32 } from './bytes';
import { K_MAX } from './constants';
import { SilentPaymentError } from './errors';
import { taggedHash } from './hash';
import { extractInputPublicKey, isP2tr, smallestOutpoint, spendsUnknownSegwit, type ScanInput } from './inputs';
import { assertValidScalar, isValidScalar } from './tweak';

/** An input the sender spends, with its private key. */
export interface SendInput extends ScanInput {
  /** the private key of the spent output (for P2TR: the tweaked key of the output key). */
  privateKey: Uint8Array;
  /** whether the key is used x-only (taproot); default: whether the prevout is P2TR. */
  isXOnly?: boolean;
}

export interface SendOptions {
  /** secp256k1 implementation; default noble (sending is not a hot path). */
  backend?: AnySecp256k1Backend;
  /** when given, every recipient address must carry this network's prefix. */
  network?: Network;
}

/** Details of one recipient group (one B_scan), for tests and diagnostics. */
export interface SendGroup {
  scanPub: string;
  /** ecdh_shared_secret = input_hash·a·B_scan, compressed hex. */
  sharedSecret: string;
  /** for each address of the group in order: the address and its x-only output key. */
  outputs: { address: string; xonly: Uint8Array; k: number }[];
}

/**
 * Sending (BIP-352 "Sender"): the x-only taproot output keys to create for each recipient
 * address, in the order the addresses appear (an address listed twice gets two outputs).
 * @throws {SilentPaymentError} `INVALID_ADDRESS`, `UNSUPPORTED_INPUT` (an input spends SegWit
 *   v2+), `NO_ELIGIBLE_INPUTS`, `PRIVATE_KEY_MISMATCH`, `INPUT_KEYS_SUM_ZERO`, `K_MAX_EXCEEDED`
 *   (a B_scan group of more than K_max addresses), `INVALID_SCALAR`.
 */
export function createSilentPaymentOutputs(
  inputs: readonly SendInput[],
  recipients: readonly string[],
  options: SendOptions = {},
): Map<string, Uint8Array[]> {
  const result = new Map<string, Uint8Array[]>();
  for (const group of createSilentPaymentGroups(inputs, recipients, options)) {
    for (const { address, xonly } of group.outputs) {
      const list = result.get(address);
      if (list) list.push(xonly);
      else result.set(address, [xonly]);
    }
  }
  return result;
}

/**
 * Like {@link createSilentPaymentOutputs}, grouped by B_scan with the shared secret of each group.
 * @throws as {@link createSilentPaymentOutputs}.
 */
export function createSilentPaymentGroups(
  inputs: readonly SendInput[],
  recipients: readonly string[],
  options: SendOptions = {},
): SendGroup[] {
  if (!Array.isArray(inputs) || inputs.length === 0) throw new TypeError('"inputs" expected a non-empty array');
  if (!Array.isArray(recipients)) throw new TypeError('"recipients" expected an array of addresses');
  const backend = options.backend ?? loadSecp256k1Backend('noble');
  const hrp = options.network ? hrpForNetwork(options.network) : undefined;

  // group the recipients by B_scan, and check K_max before any EC work
  const groups = new Map<string, { scanPub: Uint8Array; members: { address: string; spendPub: Uint8Array }[] }>();
  for (const address of recipients) {
    const decoded = decodeSilentPaymentAddress(address);
    if (hrp && decoded.hrp !== hrp) {
      throw new SilentPaymentError('INVALID_ADDRESS', `address prefix ${decoded.hrp} does not match network ${options.network}`);
    }
    const id = bytesToHex(decoded.scanPub);
    const group = groups.get(id);
    const member = { address, spendPub: decoded.spendPub };
    if (group) group.members.push(member);
    else groups.set(id, { scanPub: decoded.scanPub, members: [member] });
  }
  for (const group of groups.values()) {
    if (group.members.length > K_MAX) {
      throw new SilentPaymentError(
        'K_MAX_EXCEEDED',
        `${group.members.length} addresses share one scan key; at most K_max = ${K_MAX} per group`,
      );
    }
  }

  if (spendsUnknownSegwit(inputs)) {
    throw new SilentPaymentError('UNSUPPORTED_INPUT', 'an input spends a SegWit version 2+ output; exclude it');
  }

  // a = sum of the eligible private keys, taproot keys negated to even y
  let a: Uint8Array | null = null;
  for (const input of inputs) {
    const pub = extractInputPublicKey(input);
    if (pub === null || backend.pointFromCompressed(pub) === null) continue;
    assertBytes(input.privateKey, 'privateKey', 32);
    if (!isValidScalar(input.privateKey)) throw new SilentPaymentError('INVALID_SCALAR', 'an input private key is not a valid scalar');
    const xonly = input.isXOnly ?? isP2tr(input.prevoutScript);
    let key = input.privateKey;
    const own = backend.toCompressed(backend.baseMul(key));
    if (xonly) {
      if (own[0] === 0x03) key = backend.scalarNegate(key);
      if (bytesToHex(own.subarray(1)) !== bytesToHex(pub.subarray(1))) {
        throw new SilentPaymentError(
          'PRIVATE_KEY_MISMATCH',
          `the private key of input ${input.txid}:${input.vout} does not match its output key`,
        );
      }
    } else if (bytesToHex(own) !== bytesToHex(pub)) {
      throw new SilentPaymentError(
        'PRIVATE_KEY_MISMATCH',
        `the private key of input ${input.txid}:${input.vout} does not match its public key`,
      );
    }
    a = a === null ? key : backend.scalarAdd(a, key);
  }
  if (a === null) throw new SilentPaymentError('NO_ELIGIBLE_INPUTS', 'no input is of a type BIP-352 derives the shared secret from');
  if (!isValidScalar(a)) throw new SilentPaymentError('INPUT_KEYS_SUM_ZERO', 'the input private keys sum to zero');

  const A = backend.baseMul(a);
  const inputHash = taggedHash('BIP0352/Inputs', smallestOutpoint(inputs), backend.toCompressed(A));
  assertValidScalar(inputHash, 'input_hash');
  const scalar = backend.scalarMul(inputHash, a);

  const out: SendGroup[] = [];
  for (const group of groups.values()) {
    const scan = backend.pointFromCompressed(group.scanPub);
    const ecdh = backend.toCompressed(backend.mul(scan, scalar));
    const outputs: SendGroup['outputs'] = [];
    let k = 0;
    for (const member of group.members) {
      const tk = taggedHash('BIP0352/SharedSecret', ecdh, ser32(k));
      assertValidScalar(tk, 't_k');
      const p = backend.addTweak(backend.pointFromCompressed(member.spendPub), tk);
      if (p === null) throw new SilentPaymentError('INVALID_SCALAR', 'output key is the point at infinity');
      outputs.push({ address: member.address, xonly: backend.toXOnly(p), k });
      k++;
    }
    out.push({ scanPub: bytesToHex(group.scanPub), sharedSecret: bytesToHex(ecdh), outputs });
  }
  return out;
}
