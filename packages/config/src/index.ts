export {
  ConfigError,
  loadDotEnvFile,
  readString,
  readOptional,
  readInt,
  readPort,
  readBool,
  readEnum,
  readList,
  readHex,
  type Env,
} from './env';
