export { startChainDouble, type ChainDouble, type ChainDoubleOptions, type Behaviour, type ReceivedRequest } from './server';
export {
  Chain,
  ChainError,
  type ChainName,
  type ChainOptions,
  type FundKind,
  type FundedOutput,
  type BlockRecord,
  type MempoolEntry,
} from './chain';
export { decodeTx, txToJson, type DecodedTx, type TxInput, type TxOutput, type Coin } from './tx';
export {
  scriptToAsm,
  classifyScript,
  scriptToAddress,
  scriptPubKeyJson,
  addDescriptorChecksum,
  ADDRESS_PARAMS,
  type OutputType,
} from './script';
export { merkleRoot, headerHash, serializeHeader, bitsToTarget, type BlockHeader } from './block';
export { writeJson, formatDouble, amount, JsonRaw, sha256d, hash160 } from './encoding';
export { executeMethod, SERVED_METHODS, RpcMethodError } from './rpc';
export { BITCOIND_FIXTURES_DIR, loadBitcoindFixture, listBitcoindFixtures, loadBitcoindContext, type BitcoindFixture } from './fixtures';
export { signSpend, type SpendOutput, type SpendOptions } from './spend';
export { buildSilentPayment, silentPaymentInputView, plainScript, type PaymentRecipient } from './silent-payment';
