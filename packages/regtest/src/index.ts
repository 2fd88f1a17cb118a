export { freePort, FREE_PORT_FROM, ephemeralLow } from './port';
export { findBitcoind, requireBitcoind, bitcoindVersion, notRunMessage, BITCOIND_ENV, BITCOIND_MAJOR, type FoundBitcoind } from './find';
export { startRegtestNode, NodeRpcError, type RegtestNode, type RegtestNodeOptions, type RawReply } from './node';
export { createWallet, createFundedWallet, satsToBtcString, type RegtestWallet, type FundingOutput } from './wallet';
export {
  makeSilentPayment,
  newKey,
  newSilentPaymentReceiver,
  type SilentPayment,
  type SilentPaymentOptions,
  type InputKind,
} from './silent-payment';
export { buildDenseChain, type DenseChain, type DenseChainOptions } from './dense-chain';
