export { ERROR_CODES, HTTP_STATUS_BY_CODE, DEFAULT_MESSAGE_BY_CODE, type ErrorCode } from './codes';
export {
  AppError,
  toAppError,
  toErrorRecord,
  toNestedErrorRecord,
  type AppErrorOptions,
  type ErrorRecord,
  type NestedErrorRecord,
} from './app-error';
export { RPC_ERROR_CODES, RpcError, type RpcErrorCode, type RpcErrorObject } from './json-rpc';
export {
  errorHandler,
  finalHandler,
  notFoundHandler,
  UNAVAILABLE_LOG_INTERVAL_MS,
  type ErrorHandlerOptions,
  type ErrorLogger,
} from './middleware';
