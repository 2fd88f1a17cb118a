import { ConfigError, LOG_LEVELS, readBool, readEnum, readHex, readInt, readList, readLogLevel, readPort } from '../src';

describe('environment readers', () => {
  it('reads values and falls back on defaults', () => {
    const env = { P: '8080', B: 'yes', L: 'a, b,,c', E: 'redis', H: 'AB'.repeat(32) };
    expect(readPort(env, 'P', 1)).toBe(8080);
    expect(readPort(env, 'MISSING', 6666)).toBe(6666);
    expect(readBool(env, 'B', false)).toBe(true);
    expect(readList(env, 'L')).toEqual(['a', 'b', 'c']);
    expect(readEnum(env, 'E', ['sqlite', 'redis'] as const, 'sqlite')).toBe('redis');
    expect(readHex(env, 'H', 32)).toBe('ab'.repeat(32));
  });

  it('names the variable, not the value, when it is malformed', () => {
    expect(() => readPort({ PORT: '70000' }, 'PORT', 1)).toThrow(new ConfigError('PORT must be an integer from 0 to 65535'));
    expect(() => readInt({ N: '1.5' }, 'N', 1)).toThrow(ConfigError);
    expect(() => readBool({ X: 'maybe' }, 'X', false)).toThrow('X must be true or false');
    expect(() => readHex({ K: 'secret' }, 'K', 32)).toThrow(/^K must be 64 hex characters$/);
  });

  it('reads LOG_LEVEL as one of the logger levels, info by default', () => {
    expect(readLogLevel({})).toBe('info');
    expect(readLogLevel({ LOG_LEVEL: 'debug' })).toBe('debug');
    expect(() => readLogLevel({ LOG_LEVEL: 'verbose' })).toThrow(new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`));
  });
});
