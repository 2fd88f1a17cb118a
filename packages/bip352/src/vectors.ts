import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { encodeSilentPaymentAddress } from './address';
import type { BackendName } from './backend';
import { loadSecp256k1Backend } from './load-backend';
import { bytesToHex, hexToBytes } from './bytes';
import { SilentPaymentError } from './errors';
import { extractInputPublicKey, parseWitness, type ScanInput } from './inputs';
import { labeledSpendPub } from './labels';
import { packTransactions } from './packed';
import { createReceiver } from './receiver';
import { createSilentPaymentGroups, type SendInput } from './sender';
import { computeTweakData, computeTweaks } from './tweak-data';

/** One `vin` object of the BIP-352 vector schema (shaped like getrawtransaction verbosity 2, witness serialised). */
export interface VectorVin {
  txid: string;
  vout: number;
  scriptSig: string;
  txinwitness: string;
  prevout: { scriptPubKey: { hex: string } };
  private_key?: string;
}

type VectorRecipient = string | { address: string; count?: number; scan_pub_key?: string; spend_pub_key?: string };

/** A test case of `send_and_receive_test_vectors.json`. */
export interface VectorCase {
  comment: string;
  sending: {
    given: { vin: VectorVin[]; recipients: VectorRecipient[] };
    expected: { outputs: string[][]; n_outputs?: number; shared_secrets?: (string | null)[]; input_pub_keys?: string[] };
  }[];
  receiving: {
    given: {
      vin: VectorVin[];
      outputs: string[];
      key_material: { scan_priv_key: string; spend_priv_key: string };
      labels: number[];
    };
    expected: {
      addresses: string[];
      outputs?: { priv_key_tweak: string; pub_key: string; signature?: string }[];
      n_outputs?: number;
      tweak?: string | null;
      shared_secret?: string | null;
      input_pub_key_sum?: string | null;
    };
  }[];
}

/** The outcome of one sending or receiving test on one backend. */
export interface VectorResult {
  name: string;
  backend: BackendName;
  ok: boolean;
  error?: string;
}

/** The vector `vin` as a scan input (the serialised witness parsed into items). */
export function scanInputFromVectorVin(vin: VectorVin): ScanInput {
  return {
    txid: vin.txid,
    vout: vin.vout,
    scriptSig: hexToBytes(vin.scriptSig),
    witness: parseWitness(hexToBytes(vin.txinwitness)),
    prevoutScript: hexToBytes(vin.prevout.scriptPubKey.hex),
  };
}

/** The txid the vectors' transactions are packed under (the vectors give none; the scan does not read it). */
const PACKED_TXID = '00'.repeat(32);

const MESSAGE = sha256(new TextEncoder().encode('message'));
const AUX = sha256(new TextEncoder().encode('random auxiliary data'));
const N = secp256k1.Point.Fn.ORDER;

function fail(message: string): never {
  throw new Error(message);
}

function sameSet(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  const sa = [...a].sort();
  const sb = [...b].sort();
  return sa.every((v, i) => v === sb[i]);
}

function runSending(test: VectorCase['sending'][number], backendName: BackendName): void {
  const backend = loadSecp256k1Backend(backendName);
  const { vin, recipients } = test.given;
  const inputs: SendInput[] = vin.map((v) => ({ ...scanInputFromVectorVin(v), privateKey: hexToBytes(v.private_key ?? '') }));
  const addresses: string[] = [];
  for (const r of recipients) {
    if (typeof r === 'string') addresses.push(r);
    else for (let i = 0; i < (r.count ?? 1); i++) addresses.push(r.address);
  }
  if (test.expected.input_pub_keys) {
    const keys = inputs
      .map((input) => extractInputPublicKey(input))
      .filter((k): k is Uint8Array => k !== null && backend.pointFromCompressed(k) !== null)
      .map((k) => bytesToHex(k));
    if (!sameSet(keys, test.expected.input_pub_keys)) fail(`input public keys ${keys.join(',')} differ`);
  }
  const expectFailure = test.expected.outputs.length === 1 && test.expected.outputs[0]?.length === 0;
  let groups;
  try {
    groups = createSilentPaymentGroups(inputs, addresses, { backend });
  } catch (error) {
    if (expectFailure && error instanceof SilentPaymentError) return;
    throw error;
  }
  const produced = groups.flatMap((g) => g.outputs.map((o) => bytesToHex(o.xonly)));
  if (expectFailure) {
    if (produced.length > 0) fail(`expected no outputs, got ${produced.length}`);
    return;
  }
  if (!test.expected.outputs.some((set) => sameSet(set, produced))) {
    fail(`outputs ${produced.join(',')} match none of the ${test.expected.outputs.length} expected sets`);
  }
  const secrets = (test.expected.shared_secrets ?? []).filter((s): s is string => typeof s === 'string');
  if (
    secrets.length > 0 &&
    !sameSet(
      [...new Set(secrets)],
      groups.map((g) => g.sharedSecret),
    )
  ) {
    fail(`shared secrets ${groups.map((g) => g.sharedSecret).join(',')} differ`);
  }
}

function runReceiving(test: VectorCase['receiving'][number], backendName: BackendName): void {
  const backend = loadSecp256k1Backend(backendName);
  const { vin, outputs, key_material: keys, labels } = test.given;
  const { expected } = test;
  const scanPriv = hexToBytes(keys.scan_priv_key);
  const spendPriv = hexToBytes(keys.spend_priv_key);
  const scanPub = secp256k1.getPublicKey(scanPriv, true);
  const spendPub = secp256k1.getPublicKey(spendPriv, true);

  const addresses = [
    encodeSilentPaymentAddress(scanPub, spendPub, 'mainnet'),
    ...labels.map((m) => encodeSilentPaymentAddress(scanPub, labeledSpendPub(scanPriv, spendPub, m), 'mainnet')),
  ];
  if (addresses.join() !== expected.addresses.join()) fail(`addresses ${addresses.join(',')} differ`);

  const inputs = vin.map(scanInputFromVectorVin);
  const tweak = computeTweakData(inputs, backend);
  if (expected.tweak !== undefined) {
    if ((tweak?.tweak ?? null) !== expected.tweak) fail(`tweak ${tweak?.tweak} differs from ${expected.tweak}`);
  }
  // the batch (native: in C, eight at a time) gives each transaction's tweak as computeTweakData
  for (const batched of computeTweaks(
    Array.from({ length: 8 }, () => inputs),
    backend,
  )) {
    if ((batched === null ? null : bytesToHex(batched)) !== (tweak?.tweak ?? null))
      fail(`computeTweaks gave ${String(batched && bytesToHex(batched))}`);
  }
  if (expected.input_pub_key_sum !== undefined && (tweak?.inputPubKeySum ?? null) !== expected.input_pub_key_sum) {
    fail(`input public key sum ${tweak?.inputPubKeySum} differs`);
  }
  if (expected.shared_secret !== undefined) {
    const secret = tweak
      ? bytesToHex(
          secp256k1.Point.fromHex(tweak.tweak)
            .multiply(BigInt('0x' + keys.scan_priv_key))
            .toBytes(true),
        )
      : null;
    if (secret !== expected.shared_secret) fail(`shared secret ${secret} differs from ${expected.shared_secret}`);
  }

  const receiver = createReceiver({ scanPriv, spendPub, labels, backend });
  const scanOutputs = outputs.map((x, index) => ({ index, script: hexToBytes('5120' + x) }));
  const found = receiver.scanTransaction(inputs, scanOutputs);
  // the same transaction eight times in one call: the native scanner then multiplies in its lanes (where the CPU has them)
  for (const answer of receiver.scanTransactions(Array.from({ length: 8 }, () => ({ inputs, outputs: scanOutputs })))) {
    if (answer instanceof Error) fail(`scanTransactions failed: ${answer.message}`);
    if (JSON.stringify(answer) !== JSON.stringify(found))
      fail(`scanTransactions found ${JSON.stringify(answer)}, scanTransaction ${JSON.stringify(found)}`);
  }
  // and packed, as packBlockAnswer gives a block's transactions (inputs read in C by the native backend)
  const packed = receiver.scanPacked(
    packTransactions([{ txid: PACKED_TXID, inputs, outputs: scanOutputs, values: scanOutputs.map(() => 0) }]),
  );
  if (packed.refused.length > 0) fail(`scanPacked refused the transaction: ${packed.refused[0]!.error.message}`);
  const packedFound = packed.hits[0]?.found ?? [];
  if (JSON.stringify(packedFound) !== JSON.stringify(found))
    fail(`scanPacked found ${JSON.stringify(packedFound)}, scanTransaction ${JSON.stringify(found)}`);
  // and from its tweak, as a light client scans an index row (the outputs are all taproot: position = index)
  if (tweak !== null) {
    const row = { tweak: hexToBytes(tweak.tweak), outputs: outputs.map(hexToBytes) };
    for (const answer of receiver.scanTweaks(Array.from({ length: 8 }, () => row))) {
      if (JSON.stringify(answer) !== JSON.stringify(found))
        fail(`scanTweaks found ${JSON.stringify(answer)}, scanTransaction ${JSON.stringify(found)}`);
    }
  }
  const want = expected.n_outputs ?? expected.outputs?.length ?? 0;
  if (found.length !== want) fail(`found ${found.length} outputs, expected ${want}`);
  for (const out of found) {
    if (outputs[out.index] !== out.xonly) fail(`found output ${out.index} is not ${out.xonly}`);
    const d = (BigInt('0x' + keys.spend_priv_key) + BigInt('0x' + out.tweak)) % N;
    const dBytes = hexToBytes(d.toString(16).padStart(64, '0'));
    if (bytesToHex(schnorr.getPublicKey(dBytes)) !== out.xonly) fail(`tweak of output ${out.index} does not give its key`);
    if (expected.outputs) {
      const match = expected.outputs.find((e) => e.pub_key === out.xonly);
      if (!match) fail(`output ${out.xonly} is not expected`);
      if (match.priv_key_tweak !== out.tweak) fail(`tweak ${out.tweak} differs from ${match.priv_key_tweak}`);
      if (match.signature !== undefined) {
        const sig = bytesToHex(schnorr.sign(MESSAGE, dBytes, AUX));
        if (sig !== match.signature) fail(`signature for ${out.xonly} differs`);
        if (!schnorr.verify(hexToBytes(sig), MESSAGE, hexToBytes(out.xonly))) fail(`signature for ${out.xonly} does not verify`);
      }
    }
  }
}

/**
 * Runs every sending and receiving test of a BIP-352 vector file (already parsed) on each backend.
 * Never throws for a failing test: failures are results with `ok: false` and the reason.
 */
export function runVectors(cases: VectorCase[], backends: readonly BackendName[]): VectorResult[] {
  if (!Array.isArray(cases)) throw new TypeError('"cases" expected the array of a BIP-352 vector file');
  const results: VectorResult[] = [];
  for (const backend of backends) {
    for (const test of cases) {
      test.sending.forEach((s, i) => results.push(attempt(`${test.comment} / sending #${i + 1}`, backend, () => runSending(s, backend))));
      test.receiving.forEach((r, i) =>
        results.push(attempt(`${test.comment} / receiving #${i + 1}`, backend, () => runReceiving(r, backend))),
      );
    }
  }
  return results;
}

function attempt(name: string, backend: BackendName, run: () => void): VectorResult {
  try {
    run();
    return { name, backend, ok: true };
  } catch (error) {
    return { name, backend, ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}
