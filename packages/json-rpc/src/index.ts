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
  type CallState,
  type JsonVersion,
} from './envelope';
export { coreAcceptsStrings } from './core-strings';
