import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import {
  createReceiver,
  extractInputPublicKey,
  parseWitness,
  scanInputsFromRpc,
  scanOutputsFromRpc,
  serializeWitness,
  type RpcVin,
} from '../src';
import { loadSecp256k1Backend } from '../src/load-backend';
import { scanInputFromVectorVin, type VectorVin } from '../src/vectors';
import { loadCoreBlock, loadOfficialVectors } from './support/helpers';

const cases = loadOfficialVectors();
const vins: VectorVin[] = cases.flatMap((c) => [...c.sending.flatMap((s) => s.given.vin), ...c.receiving.flatMap((r) => r.given.vin)]);

/** The vector vin as Bitcoin Core's RPC prints it: witness as an array of hex items. */
function toRpcVin(vin: VectorVin): RpcVin {
  const witness = parseWitness(hexToBytes(vin.txinwitness)).map((item) => bytesToHex(item));
  return {
    txid: vin.txid,
    vout: vin.vout,
    scriptSig: { asm: '', hex: vin.scriptSig },
    ...(witness.length > 0 ? { txinwitness: witness } : {}),
    prevout: { generated: false, height: 1, value: 1, scriptPubKey: { hex: vin.prevout.scriptPubKey.hex, type: 'x' } },
    sequence: 0xfffffffd,
  };
}

describe('scanInputsFromRpc', () => {
  it('turns every vector vin in RPC form into the input parsed from its serialised witness', () => {
    expect(vins.length).toBeGreaterThan(100);
    for (const vin of vins) {
      const [fromRpc] = scanInputsFromRpc([toRpcVin(vin)]);
      expect(fromRpc).toEqual(scanInputFromVectorVin(vin));
      // and back: the adapter's witness items serialise to the vector's bytes
      expect(bytesToHex(serializeWitness(fromRpc!.witness))).toBe(vin.txinwitness);
    }
  });

  it('gives the same scan results as the vectors’ own inputs', () => {
    const backend = loadSecp256k1Backend('noble');
    let found = 0;
    for (const c of cases) {
      for (const r of c.receiving) {
        const { scan_priv_key: scan, spend_priv_key: spend } = r.given.key_material;
        const spendPub = backend.toCompressed(backend.baseMul(hexToBytes(spend)));
        const receiver = createReceiver({ scanPriv: hexToBytes(scan), spendPub, labels: r.given.labels, backend });
        const outputs = r.given.outputs.map((x, index) => ({ index, script: hexToBytes('5120' + x) }));
        const viaRpc = receiver.scanTransaction(scanInputsFromRpc(r.given.vin.map(toRpcVin)), outputs);
        const viaVector = receiver.scanTransaction(r.given.vin.map(scanInputFromVectorVin), outputs);
        expect(viaRpc).toEqual(viaVector);
        found += viaRpc.length;
      }
    }
    expect(found).toBeGreaterThan(2323);
  });

  it('reads a real Bitcoin Core getblock verbosity 3 block: coinbase empty, each input type keyed', () => {
    const block = loadCoreBlock();
    const [coinbase, ...spends] = block.tx;
    expect(scanInputsFromRpc(coinbase!.vin as RpcVin[])).toEqual([]);
    const kinds: string[] = [];
    for (const tx of spends) {
      const inputs = scanInputsFromRpc(tx.vin as RpcVin[]);
      expect(inputs).toHaveLength(tx.vin.length);
      for (const [i, input] of inputs.entries()) {
        const raw = tx.vin[i] as RpcVin;
        expect(input.witness.map((w) => bytesToHex(w))).toEqual(raw.txinwitness ?? []);
        expect(bytesToHex(input.prevoutScript)).toBe(raw.prevout!.scriptPubKey.hex);
        expect(extractInputPublicKey(input)).not.toBeNull();
        kinds.push(String(raw.prevout!.scriptPubKey['type']));
      }
    }
    expect(new Set(kinds)).toEqual(new Set(['witness_v1_taproot', 'witness_v0_keyhash', 'scripthash', 'pubkeyhash']));
  });

  it('rejects an input without prevout, naming it', () => {
    expect(() => scanInputsFromRpc([{ txid: '00'.repeat(32), vout: 0, scriptSig: { hex: '' } }])).toThrow(/vin\[0\].*prevout/);
  });

  it('rejects malformed hex, naming the field', () => {
    const vin = toRpcVin(vins[0]!);
    vin.txinwitness = ['abc'];
    expect(() => scanInputsFromRpc([vin])).toThrow(/vin\[0\]\.txinwitness\[0\]/);
  });
});

describe('scanOutputsFromRpc', () => {
  it('keeps the taproot outputs with their index and value, and names an output whose script is not hex', () => {
    const x = 'ab'.repeat(32);
    const vout = [
      { n: 0, value: 0.5, scriptPubKey: { hex: '0014' + '00'.repeat(20) } }, // P2WPKH: not a candidate
      { n: 1, value: 0.25, scriptPubKey: { hex: '5120' + x } },
      { n: 2, value: 1, scriptPubKey: { hex: '6a0100' } },
      { n: 3, value: 2, scriptPubKey: { hex: '5120' + x.toUpperCase() } },
    ];
    const { outputs, values } = scanOutputsFromRpc(vout);
    expect(outputs.map((o) => [o.index, bytesToHex(o.script)])).toEqual([
      [1, '5120' + x],
      [3, '5120' + x],
    ]);
    expect(values).toEqual([0.25, 2]);
    expect(scanOutputsFromRpc(vout.slice(0, 1))).toEqual({ outputs: [], values: [] });
    expect(() => scanOutputsFromRpc([...vout, { n: 4, value: 1, scriptPubKey: { hex: '5120' + 'zz'.repeat(32) } }])).toThrow(
      new TypeError('"vout[4].scriptPubKey.hex" expected an even-length hex string'),
    );
    expect(() => scanOutputsFromRpc('no' as unknown as [])).toThrow(TypeError);
  });
});

describe('parseWitness', () => {
  it('rejects truncated and trailing bytes', () => {
    expect(() => parseWitness(hexToBytes('0205aa'))).toThrow(RangeError);
    expect(() => parseWitness(hexToBytes('0101aa00'))).toThrow(RangeError);
  });
});
