import { ConfigError } from '@repo/config';
import { deadlineVariables, readConnectionCap, readDeadlines, readServerLimits, serverLimitVariables } from '../src';

describe('the listener settings every service reads', () => {
  it("gives the service's defaults when nothing is set, the values when set", () => {
    expect(readServerLimits({}, { maxConnections: 125, maxConnectionsPerIp: 32, requestTimeoutMs: 60_000 })).toEqual({
      maxConnections: 125,
      maxConnectionsPerIp: 32,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 60_000,
    });
    const env = { MAX_CONNECTIONS: '10', MAX_CONNECTIONS_PER_IP: '4', HEADERS_TIMEOUT_MS: '300', REQUEST_TIMEOUT_MS: '500' };
    expect(readServerLimits(env, { maxConnections: 50, maxConnectionsPerIp: 20 })).toEqual({
      maxConnections: 10,
      maxConnectionsPerIp: 4,
      headersTimeoutMs: 300,
      requestTimeoutMs: 500,
    });
  });

  it('refuses the same values everywhere, naming the setting and its range', () => {
    const defaults = { maxConnections: 50, maxConnectionsPerIp: 20 };
    expect(() => readServerLimits({ MAX_CONNECTIONS: '0' }, defaults)).toThrow(
      new ConfigError('MAX_CONNECTIONS must be an integer from 1 to 1000000'),
    );
    expect(() => readServerLimits({ MAX_CONNECTIONS_PER_IP: '1000001' }, defaults)).toThrow(
      'MAX_CONNECTIONS_PER_IP must be an integer from 1 to 1000000',
    );
    expect(() => readServerLimits({ REQUEST_TIMEOUT_MS: '1' }, defaults)).toThrow(
      'REQUEST_TIMEOUT_MS must be an integer from 100 to 3600000',
    );
    expect(() => readServerLimits({ HEADERS_TIMEOUT_MS: '10s' }, defaults)).toThrow(
      'HEADERS_TIMEOUT_MS must be an integer from 100 to 3600000',
    );
    expect(() => readConnectionCap({ MAX_WS_CONNECTIONS: '-1' }, 'MAX_WS_CONNECTIONS', 1000)).toThrow(
      'MAX_WS_CONNECTIONS must be an integer from 1 to 1000000',
    );
  });

  it('takes MAX_CONNECTIONS=0 (no global cap) only where the service allows it; never for the per-address cap', () => {
    const defaults = { maxConnections: 4096, maxConnectionsPerIp: 256, noGlobalCap: true };
    expect(readServerLimits({ MAX_CONNECTIONS: '0' }, defaults).maxConnections).toBe(0);
    expect(() => readServerLimits({ MAX_CONNECTIONS_PER_IP: '0' }, defaults)).toThrow(
      'MAX_CONNECTIONS_PER_IP must be an integer from 1 to 1000000',
    );
  });

  it('reads the deadlines alone (the relay shares them between its two listeners)', () => {
    expect(readDeadlines({ REQUEST_TIMEOUT_MS: '45000' })).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 45_000 });
  });

  it("--help rows show the defaults the readers apply for the same defaults, the reserve, and a service's own wording", () => {
    const defaults = { maxConnections: 125, maxConnectionsPerIp: 32, requestTimeoutMs: 60_000 };
    const rows = serverLimitVariables(defaults, { request: 'received in time, answered under NODE_TIMEOUT_MS' });
    expect(rows.map((row) => row.name)).toEqual(['MAX_CONNECTIONS', 'MAX_CONNECTIONS_PER_IP', 'HEADERS_TIMEOUT_MS', 'REQUEST_TIMEOUT_MS']);
    // Each default shown, given explicitly, reads as nothing given does.
    const shown = Object.fromEntries(rows.map((row) => [row.name, row.default]));
    expect(shown).toEqual({
      MAX_CONNECTIONS: '125',
      MAX_CONNECTIONS_PER_IP: '32',
      HEADERS_TIMEOUT_MS: '10000',
      REQUEST_TIMEOUT_MS: '60000',
    });
    expect(readServerLimits(shown, defaults)).toEqual(readServerLimits({}, defaults));
    expect(rows[0]!.description).toContain('a tenth (12) kept for addresses with none open');
    expect(rows[0]!.description).not.toContain('0: no cap');
    expect(rows[3]!.description).toBe('received in time, answered under NODE_TIMEOUT_MS');
    expect(rows[2]!.description).toBe("a request's headers not received within this time: 408, connection closed");

    expect(serverLimitVariables({ maxConnections: 4096, maxConnectionsPerIp: 256, noGlobalCap: true })[0]!.description).toContain(
      'a tenth (409) kept for addresses with none open (0: no cap)',
    );
    expect(deadlineVariables({ headersTimeoutMs: 5_000 }).map((row) => [row.name, row.default])).toEqual([
      ['HEADERS_TIMEOUT_MS', '5000'],
      ['REQUEST_TIMEOUT_MS', '30000'],
    ]);
  });
});
