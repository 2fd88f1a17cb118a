export { createContractRecorder, type ContractRecorder, type ExchangeCheck, type RecordedExchange } from './recorder';
export { createOpenApiCheck } from './openapi';
export { createOpenRpcCheck } from './openrpc';
export { createAsyncApiMessageCheck } from './asyncapi';
export { validateAsyncApiDocument, validateOpenApiDocument, validateOpenRpcDocument } from './validate';
export { createSchemaCompiler, resolveLocalRefs } from './schema';
export { verifyAfterAll } from './jest';
