export {
  createContractRecorder,
  createMessageRecorder,
  type ContractRecorder,
  type ExchangeCheck,
  type MessageRecorder,
  type RecordedExchange,
} from './recorder';
export { createOpenApiCheck } from './openapi';
export { createOpenRpcCheck } from './openrpc';
export { createAsyncApiMessageCheck } from './asyncapi';
export { validateAsyncApiDocument, validateOpenApiDocument, validateOpenRpcDocument } from './validate';
export { createSchemaCompiler, resolveLocalRefs } from './schema';
export { verifyAfterAll } from './jest';
