export {
  ConfigError,
  loadDotEnvFile,
  readString,
  readOptional,
  readInt,
  readPort,
  readBool,
  readEnum,
  readLogLevel,
  LOG_LEVELS,
  type LogLevel,
  readList,
  readHex,
  type Env,
} from './env';
export { helpText, handleCommandLine, packageVersion, type CommandSpec, type CliOption, type EnvVariable, type CliIo } from './cli';
