export {
  EnvelopeError,
  initialState,
  parseCall,
  isNotification,
  replyObject,
  successText,
  errorText,
  errorStatus,
  splitJsonArray,
  type CallState,
  type JsonVersion,
} from './envelope';
