import {
  createReceiver,
  encodeSilentPaymentAddress,
  labeledSpendPub,
  loadSecp256k1Backend,
  type BackendName,
  type Receiver,
} from '@repo/bip352';
import type { ServiceKeys } from './keys';
import type { SpNetwork } from './config';

/** BIP-352: label m = 0 is reserved for change and never handed out to a payer. */
export const CHANGE_LABEL = 0;

/** The service's addresses and the BIP-352 receiver that recognises payments to them. */
export interface AddressBook {
  readonly network: SpNetwork;
  /** The unlabelled address (B_scan, B_spend). */
  readonly baseAddress: string;
  /** The change address (label m = 0). */
  readonly changeAddress: string;
  readonly receiver: Receiver;
  /** Computes the address of label m (B_m = B_spend + hash_BIP0352/Label(b_scan || m)·G). */
  labelAddress(m: number): string;
  /** Scans for label m from now on and remembers its address. */
  addLabel(m: number, address: string): void;
  /**
   * Scans for the labels already handed out (indexes m ≥ 1, or records with an `m`), as the app's
   * `start()` reads them from the store; their addresses are read through `lookupAddress`.
   */
  loadLabels(labels: LabelIndexes): void;
  /** The address paid through label m; null: the unlabelled address. Undefined when unknown. */
  addressOf(m: number | null): string | undefined;
}

/** Label indexes m ≥ 1, compactly or as records. */
export type LabelIndexes = ArrayLike<number> | ReadonlyArray<{ m: number }>;

/** Options of {@link createAddressBook}. */
export interface AddressBookOptions {
  keys: ServiceKeys;
  network: SpNetwork;
  /**
   * Label indexes m ≥ 1 already handed out (records with an `m` are accepted too; default none,
   * see {@link AddressBook.loadLabels}). Only the
   * indexes are kept here: the labels' texts and addresses stay in the store, which
   * `lookupAddress` reads (docs/silent-payments.md, "Limits").
   */
  labels?: LabelIndexes;
  /** The stored address of label m, read when a payment to it is found; by default computed. */
  lookupAddress?: (m: number) => string | undefined;
  /** The secp256k1 backend of `@repo/bip352`; undefined: its default (throws when unavailable). */
  backend?: BackendName | undefined;
}

/**
 * Builds the address book. Throws (from `@repo/bip352`) when the requested secp256k1 backend is
 * missing: scanning never falls back silently to a slower one.
 */
export function createAddressBook(options: AddressBookOptions): AddressBook {
  const { keys, network } = options;
  const backend = loadSecp256k1Backend(options.backend);
  const indexes = indexesOf(options.labels ?? []);
  const receiver = createReceiver({ scanPriv: keys.scanPriv, spendPub: keys.spendPub, labels: indexes, backend });
  const labelAddress = (m: number) => encodeSilentPaymentAddress(keys.scanPub, labeledSpendPub(keys.scanPriv, keys.spendPub, m), network);
  const changeAddress = labelAddress(CHANGE_LABEL);
  const known = new Set<number>(indexes);
  const lookup = options.lookupAddress ?? labelAddress;
  const baseAddress = encodeSilentPaymentAddress(keys.scanPub, keys.spendPub, network);
  return {
    network,
    baseAddress,
    changeAddress,
    receiver,
    labelAddress,
    addLabel(m) {
      known.add(m);
      receiver.addLabel(m);
    },
    loadLabels(labels) {
      for (const m of indexesOf(labels)) {
        known.add(m);
        receiver.addLabel(m);
      }
    },
    addressOf: (m) => (m === null ? baseAddress : m === CHANGE_LABEL ? changeAddress : known.has(m) ? lookup(m) : undefined),
  };
}

function indexesOf(labels: LabelIndexes): number[] {
  const indexes: number[] = [];
  for (let i = 0; i < labels.length; i++) {
    const l = labels[i]!;
    indexes.push(typeof l === 'number' ? l : l.m);
  }
  return indexes;
}
