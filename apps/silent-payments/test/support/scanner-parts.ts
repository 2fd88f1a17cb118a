import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { startChainDouble, type ChainDouble } from '@repo/chain-double';
import { createSilentLogger } from '@repo/service';
import { createAddressBook, type AddressBook } from '../../src/address-book';
import { createChainRpcClient, type ChainRpcClient } from '../../src/chain-rpc';
import { createNoopPublisher } from '../../src/publisher';
import { createScanner, type Scanner, type ScannerOptions } from '../../src/scanner';
import { openStore, openStoreAt, type Store } from '../../src/store';
import { startTestPostgres, type TestPostgres } from '../tweak-index/support/postgres';

const USER = 'scanner';
const PASSWORD = 'scannerpass';

/** What a scanner is built from in {@link useScannerParts}; each is valid inside a test. */
export interface ScannerParts {
  /** The chain double, one for the describe block. */
  readonly node: ChainDouble;
  /** A fresh store for each test: a SQLite file, or a wallet of its own in the PostgreSQL database. */
  readonly store: Store;
  /** A client toward the double, for each test. */
  readonly rpc: ChainRpcClient;
  /** The test's temporary folder (the store's file is in it). */
  readonly dir: string;
  /** Builds a scanner on the test's store and client (each can be overridden) and starts it; stopped after the test. */
  start(options: Omit<ScannerOptions, 'rpc' | 'store' | 'logger' | 'publisher'> & Partial<ScannerOptions>): Scanner;
}

/** The store backend of {@link useScannerParts}: SQLite (the default) or PostgreSQL. */
export type StoreBackend = 'sqlite' | 'postgres';

/**
 * For a describe block of scanner tests: the chain double (started before all, closed after
 * all), and for each test a store (a SQLite file in a directory of its own, or, with
 * `backend` postgres, a wallet of its own in a throwaway PostgreSQL server started for the
 * block) and a client toward the double, closed and removed after it with the scanner the test
 * started.
 */
export function useScannerParts(prefix: string, backend: StoreBackend = 'sqlite'): ScannerParts {
  let pg: TestPostgres | undefined;
  let tests = 0;
  let node: ChainDouble | undefined;
  let store: Store | undefined;
  let rpc: ChainRpcClient | undefined;
  let dir: string | undefined;
  let scanner: Scanner | undefined;
  const defined = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} exists only inside a test`);
    return value;
  };
  beforeAll(async () => {
    node = await startChainDouble({ port: 0, host: '127.0.0.1', user: USER, password: PASSWORD, chain: 'regtest' });
    if (backend === 'postgres') pg = await startTestPostgres();
  }, 60_000);
  afterAll(async () => {
    await node?.close();
    await pg?.stop();
  }, 60_000);
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    const sqliteFile = join(dir, 'sp.sqlite');
    store =
      pg === undefined ? openStore(sqliteFile) : await openStoreAt({ sqliteFile, databaseUrl: pg.url, wallet: `${prefix}test-${++tests}` });
    rpc = createChainRpcClient({ url: defined(node, 'the node').url, user: USER, password: PASSWORD });
  });
  afterEach(async () => {
    await scanner?.stop();
    scanner = undefined;
    rpc?.close();
    await store?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return {
    get node() {
      return defined(node, 'the node');
    },
    get store() {
      return defined(store, 'the store');
    },
    get rpc() {
      return defined(rpc, 'the client');
    },
    get dir() {
      return defined(dir, 'the folder');
    },
    start(options) {
      scanner = createScanner({
        rpc: defined(rpc, 'the client'),
        store: defined(store, 'the store'),
        logger: createSilentLogger(),
        publisher: createNoopPublisher(),
        ...options,
      });
      scanner.start();
      return scanner;
    },
  };
}

/** An address book of fresh random keys (regtest, no labels, the native backend), with its scan key and spend key. */
export function randomAddressBook(): { book: AddressBook; scanPriv: Uint8Array; spendPub: Uint8Array } {
  const scanPriv = secp256k1.utils.randomSecretKey();
  const spendPub = secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true);
  const book = createAddressBook({
    keys: { scanPriv, scanPub: secp256k1.getPublicKey(scanPriv, true), spendPub, source: 'env' },
    network: 'regtest',
    labels: [],
    backend: 'native',
  });
  return { book, scanPriv, spendPub };
}
