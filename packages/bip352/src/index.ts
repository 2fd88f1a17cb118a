export { K_MAX, MAX_ADDRESS_LENGTH, NUMS_H_HEX } from './constants';
export { SilentPaymentError, SILENT_PAYMENT_ERROR_CODES, type SilentPaymentErrorCode } from './errors';
export {
  encodeSilentPaymentAddress,
  decodeSilentPaymentAddress,
  hrpForNetwork,
  NETWORKS,
  type Network,
  type DecodedSilentPaymentAddress,
} from './address';
export { labeledSpendPub } from './labels';
export { labelTweak } from './tweak';
export {
  extractInputPublicKey,
  parseWitness,
  serializeWitness,
  serializeOutpoint,
  smallestOutpoint,
  spendsUnknownSegwit,
  witnessVersion,
  isP2tr,
  type ScanInput,
  type ScanOutput,
} from './inputs';
export { isP2trHex, scanInputsFromRpc, scanOutputsFromRpc, type RpcVin, type RpcVout } from './rpc';
export {
  packBlockAnswer,
  packRpcBlock,
  NO_PREVOUT_HEIGHT,
  TAPROOT_SPEND_BYTES,
  type PackedBlockAnswer,
  type RpcBlockAnswer,
} from './block-answer';
export { compactSize, readCompactSize, u32le, u64le, concatBytes } from './bytes';
export { computeTweakData, computeTweaks, computeTweaksOfPacked, PACKED_TWEAK_BYTES, type TweakData } from './tweak-data';
export {
  createReceiver,
  type Receiver,
  type ReceiverOptions,
  type FoundOutput,
  type TransactionToScan,
  type PackedScan,
  type TweakRow,
} from './receiver';
export {
  packTransactions,
  PackedWriter,
  readPackedOutputs,
  readPackedTransaction,
  readPackedTransactions,
  type PackedTransaction,
} from './packed';
export { createSilentPaymentOutputs, createSilentPaymentGroups, type SendInput, type SendOptions, type SendGroup } from './sender';
export { loadSecp256k1Backend, isBackendAvailable, DEFAULT_BACKEND } from './load-backend';
export { isBackendName, BACKEND_NAMES } from './backend';
export type {
  Secp256k1Backend,
  AnySecp256k1Backend,
  BackendName,
  TransactionScanner,
  TransactionMatch,
  TransactionScanJob,
  TweakScanJob,
  PackedMatches,
} from './backend';
