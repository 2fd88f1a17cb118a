import type { Secp256k1Backend, TransactionScanner } from './backend';
import { assertLabel } from './bytes';
import { assertValidScalar, labelTweak } from './tweak';

/**
 * A receiver's labels, kept compact so that a receiver with 100,000 labels costs a few megabytes:
 * no object per label. Each label has a slot; `ms` maps slots to label indexes m. Label tweaks are
 * not kept: a match recomputes its label's tweak (one tagged hash).
 *
 * With a whole-transaction scanner (native), the spend keys B_m live in the scanner's own table
 * (native/scan.c: an affine point and a tag each) and nothing else is kept here. Without one, the
 * step-by-step scan needs L_m (the `labels` search) and B_m (the `outputs` search): both are kept
 * as 33-byte compressed points in one growing buffer each, with a map from the top 48 bits of
 * B_m's x to its slot; points are decoded only on a hit, and L_m for the first few labels, the only
 * ones the `labels` search is chosen for, stay decoded.
 */
export interface LabelTable<P> {
  /** Adds label m (idempotent). @throws {RangeError} outside 0..2^32-1; {SilentPaymentError} for an invalid tweak. */
  add(scanKey: Uint8Array, m: number): void;
  /** Label indexes, ascending. */
  list(): number[];
  count(): number;
  /** The label index m in `slot`. */
  m(slot: number): number;
  /** L_m of `slot` (step-by-step scan only). */
  point(slot: number): P;
  /** False when some B_m is the point at infinity (negligible probability): the `outputs` search cannot find it. */
  everySpendKeyFinite(): boolean;
  /**
   * The spend key (B_spend: label null; or B_m: label m) equal to `point`, or to -`point` when
   * `negated`; undefined when none (step-by-step scan only).
   */
  findSpendKey(point: P, negated: boolean): { label: number | null } | undefined;
}

/** L_m kept decoded for this many first labels. */
const DECODED_LABEL_POINTS = 16;
const POINT_BYTES = 33;

function bytesEqual(a: Uint8Array, b: Uint8Array, offset: number): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[offset + i]) return false;
  return true;
}

/** A growing byte buffer of fixed-size records. */
function grow(buffer: Uint8Array<ArrayBuffer>, needed: number): Uint8Array<ArrayBuffer> {
  if (needed <= buffer.length) return buffer;
  const next = new Uint8Array(Math.max(needed, buffer.length * 2));
  next.set(buffer);
  return next;
}

export function createLabelTable<P>(
  backend: Secp256k1Backend<P>,
  spend: P,
  spendPub: Uint8Array,
  scanner: TransactionScanner<P> | undefined,
): LabelTable<P> {
  const seen = new Set<number>();
  let ms = new Uint32Array(8);
  let count = 0;
  let everyFinite = true;
  // step-by-step scan only
  let labelPoints = new Uint8Array(0);
  let spendKeys = new Uint8Array(0);
  const decoded: P[] = [];
  /** xKey(B_m) → slot, or the slots when several share the 48 bits. */
  const bySpendKey = new Map<number, number | number[]>();
  const spendKey = backend.xKey(spend);

  function index(key: number, slot: number): void {
    const there = bySpendKey.get(key);
    if (there === undefined) bySpendKey.set(key, slot);
    else if (typeof there === 'number') bySpendKey.set(key, [there, slot]);
    else there.push(slot);
  }

  return {
    add(scanKey, m) {
      assertLabel(m);
      if (seen.has(m)) return;
      const tweak = labelTweak(scanKey, m);
      assertValidScalar(tweak, 'label tweak');
      const point = backend.baseMul(tweak);
      const spendM = backend.add(spend, point);
      const slot = count;
      if (spendM === null) everyFinite = false;
      if (scanner) {
        scanner.addSpendKey(spendM, slot);
      } else {
        labelPoints = grow(labelPoints, (slot + 1) * POINT_BYTES);
        labelPoints.set(backend.toCompressed(point), slot * POINT_BYTES);
        if (slot < DECODED_LABEL_POINTS) decoded.push(point);
        spendKeys = grow(spendKeys, (slot + 1) * POINT_BYTES);
        if (spendM !== null) {
          spendKeys.set(backend.toCompressed(spendM), slot * POINT_BYTES);
          index(backend.xKey(spendM), slot);
        }
      }
      if (slot === ms.length) {
        const next = new Uint32Array(ms.length * 2);
        next.set(ms);
        ms = next;
      }
      ms[slot] = m;
      count++;
      seen.add(m);
    },
    list: () => Array.from(ms.subarray(0, count)).sort((a, b) => a - b),
    count: () => count,
    m: (slot) => ms[slot]!,
    point(slot) {
      if (slot < decoded.length) return decoded[slot]!;
      const point = backend.pointFromCompressed(labelPoints.subarray(slot * POINT_BYTES, (slot + 1) * POINT_BYTES));
      if (point === null) throw new Error(`label slot ${slot} holds no point`);
      return point;
    },
    everySpendKeyFinite: () => everyFinite,
    findSpendKey(point, negated) {
      const key = backend.xKey(point);
      const isSpend = key === spendKey;
      const slots = bySpendKey.get(key);
      if (!isSpend && slots === undefined) return undefined;
      // a hit on 48 bits of x: compare the whole compressed key
      const target = backend.toCompressed(negated ? backend.negate(point) : point);
      if (isSpend && bytesEqual(target, spendPub, 0)) return { label: null };
      if (slots === undefined) return undefined;
      for (const slot of typeof slots === 'number' ? [slots] : slots) {
        if (bytesEqual(target, spendKeys, slot * POINT_BYTES)) return { label: ms[slot]! };
      }
      return undefined;
    },
  };
}
