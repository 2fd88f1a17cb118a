/**
 * `@repo/bip352/scan`: the receiving side alone, for threads that only scan (the silent-payment
 * service's scan workers). Its modules load neither `@noble/curves` nor `@scure/base` (addresses,
 * sending and the noble backend stay behind the main entry, and a backend is required only when
 * it is asked for), so a worker thread starts on about a quarter less CPU than one that loads
 * the whole package (README, "Entry points"). Everything here is also exported by the main entry.
 */
export { createReceiver, type Receiver, type ReceiverOptions, type FoundOutput, type TransactionToScan, type PackedScan } from './receiver';
export {
  packTransactions,
  PackedWriter,
  readPackedOutputs,
  readPackedTransaction,
  readPackedTransactions,
  type PackedTransaction,
} from './packed';
export { loadSecp256k1Backend, DEFAULT_BACKEND } from './load-backend';
export { packBlockAnswer, type PackedBlockAnswer } from './block-answer';
export { SilentPaymentError, type SilentPaymentErrorCode } from './errors';
export { isP2trHex, scanInputsFromRpc, scanOutputsFromRpc, type RpcVin, type RpcVout } from './rpc';
export type { ScanInput, ScanOutput } from './inputs';
export { isBackendName, BACKEND_NAMES, type BackendName } from './backend';
