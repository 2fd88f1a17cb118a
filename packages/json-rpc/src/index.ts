export {
  EnvelopeError,
  initialState,
  parseCall,
  isNotification,
  replyObject,
  successText,
  successParts,
  splitSuccessReply,
  successReply,
  errorText,
  errorStatus,
  splitJsonArray,
  jsonArrayElements,
  type CallState,
  type JsonVersion,
} from './envelope';
export { coreAcceptsStrings } from './core-strings';
