export { createApp, DATABASE_FILE, type SilentPaymentsDeps, type SilentPaymentsService } from './app';
export { loadConfig, NETWORKS, PAYMENTS_MAX_LIMIT, LABEL_MAX_LENGTH, type SilentPaymentsConfig, type SpNetwork } from './config';
export { loadOrCreateKeys, KEY_FILES, type ServiceKeys } from './keys';
export { createStore, openStore, paymentId, type DeferredStore, type Store, type PaymentRecord, type LabelRecord } from './store';
export { createChainRpcClient, ChainRpcError, type ChainRpcClient, type ChainRpcClientOptions } from './chain-rpc';
export {
  createNoopPublisher,
  createRelayPublisher,
  type Publisher,
  type PublisherState,
  type EventEnvelope,
  type TransactionReceivedData,
  type BlockScannedData,
} from './publisher';
export { createScanner, type Scanner, type ScannerStatus, type ScannerOptions, type BlockConsumer, type ScannedBlock } from './scanner';
export type { BlockTransaction } from './store';
export { createAddressBook, CHANGE_LABEL, type AddressBook } from './address-book';
export { btcToSats, satsToBtc, parseBtcAmount } from './amount';
