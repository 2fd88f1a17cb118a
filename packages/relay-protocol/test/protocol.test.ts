import {
  EVENT_TYPES,
  MESSAGES,
  PAYMENT_EVENT_TYPES,
  SUBSCRIPTION_TYPES,
  SYNC_TYPES,
  InvalidMessageError,
  assertMessage,
  createErrorMessage,
  createMessage,
  errorMessageOf,
  isPaymentEventType,
  parseEnvelope,
  parseSubscribe,
  type DataOf,
  type Envelope,
  type EventDataByType,
} from '../src';

const valid: EventDataByType = {
  TransactionReceived: { txid: 'a'.repeat(64), amount: 0.0001, address: 'tsp1q', block_height: 100, confirmations: 1 },
  BlockScanned: { block_height: 100, block_hash: 'b'.repeat(64), transactions_count: 3, silent_payments_found: 1 },
  PaymentReorged: { txid: 'a'.repeat(64), vout: 1, address: 'tb1p', amount: 0.5, old_block_height: 99, old_block_hash: 'c'.repeat(64) },
  PaymentSpent: { txid: 'a'.repeat(64), vout: 0, spent_txid: 'd'.repeat(64), block_height: null },
  InvoicePaid: { label: 'order-7', address: 'tsp1q', amount: 0.01, received: 0.01, status: 'paid' },
};

const envelope = (type: string, data: Record<string, unknown>, id = 'id-1'): Envelope => ({ type, id, timestamp: 1, data });
const refusal = (fn: () => unknown): InvalidMessageError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof InvalidMessageError) return err;
    throw err;
  }
  throw new Error('expected an InvalidMessageError');
};

describe('the message table', () => {
  it('lists the sync messages, the events and the payment events by role and scope', () => {
    expect(SYNC_TYPES).toEqual(['StateSync', 'HealthSync', 'MetricsSync']);
    expect(EVENT_TYPES).toEqual(['TransactionReceived', 'BlockScanned', 'PaymentReorged', 'PaymentSpent', 'InvoicePaid']);
    expect(PAYMENT_EVENT_TYPES).toEqual(['TransactionReceived', 'PaymentReorged', 'PaymentSpent', 'InvoicePaid']);
    expect(SUBSCRIPTION_TYPES).toHaveLength(8);
    expect(isPaymentEventType('BlockScanned')).toBe(false);
    expect(isPaymentEventType('InvoicePaid')).toBe(true);
  });

  it('gives every subscribable message a scope and no other message one', () => {
    for (const [type, spec] of Object.entries(MESSAGES)) {
      const subscribable = spec.role === 'sync' || spec.role === 'event';
      expect([type, 'scope' in spec]).toEqual([type, subscribable]);
    }
  });
});

describe('assertMessage', () => {
  it.each(EVENT_TYPES.map((t) => [t]))('accepts a %s with every field of the table', (type) => {
    const message = envelope(type, { ...valid[type], extra: 'kept' });
    expect(assertMessage(message)).toBe(message);
  });

  it.each([
    ['TransactionReceived', 'amount', '0.1', 'invalid field: data.amount', /expected a number, got string/],
    ['TransactionReceived', 'block_height', 1.5, 'invalid field: data.block_height', /non-negative integer, got fractional number/],
    ['TransactionReceived', 'txid', undefined, 'missing field: data.txid', /needs "txid"/],
    ['PaymentReorged', 'old_block_hash', undefined, 'missing field: data.old_block_hash', /needs/],
    ['PaymentReorged', 'vout', -1, 'invalid field: data.vout', /non-negative integer/],
    ['PaymentSpent', 'block_height', 'x', 'invalid field: data.block_height', /integer or null/],
    ['PaymentSpent', 'block_height', undefined, 'missing field: data.block_height', /needs/],
    ['InvoicePaid', 'received', Infinity, 'invalid field: data.received', /number/],
    ['BlockScanned', 'transactions_count', -3, 'invalid field: data.transactions_count', /non-negative/],
  ] as const)('refuses a %s whose %s is %p', (type, field, value, message, details) => {
    const data: Record<string, unknown> = { ...valid[type] };
    if (value === undefined) delete data[field];
    else data[field] = value;
    const err = refusal(() => assertMessage(envelope(type, data, 'ev-9')));
    expect(err).toMatchObject({ message, code: 'INVALID_MESSAGE', requestId: 'ev-9' });
    expect(err.details).toMatch(details);
  });

  it('accepts a PaymentSpent confirmed in a block', () => {
    expect(() => assertMessage(envelope('PaymentSpent', { ...valid.PaymentSpent, block_height: 812 }))).not.toThrow();
  });

  it('refuses a type outside the table', () => {
    expect(refusal(() => assertMessage(envelope('launch_rockets', {}))).message).toBe('unknown message type: launch_rockets');
  });

  it('treats fields marked optional as optional, and checks them when present', () => {
    expect(() => assertMessage(envelope('StateSync', { relay_id: 'r', state: 'running', version: '1', uptime: 3 }))).not.toThrow();
    const err = refusal(() =>
      assertMessage(envelope('StateSync', { relay_id: 'r', state: 'running', version: '1', uptime: 3, last_block_height: 'x' })),
    );
    expect(err.message).toBe('invalid field: data.last_block_height');
  });
});

describe('parseEnvelope', () => {
  it.each([
    ['bad JSON', '{"type": "ping",', 'message is not valid JSON', undefined],
    ['an array', '[1]', 'message is not a JSON object', undefined],
    ['a missing type', '{"id":"x1"}', 'missing field: type', 'x1'],
    ['a numeric type', '{"type":4,"id":"x2"}', 'invalid field: type', 'x2'],
    ['a missing id', '{"type":"ping"}', 'missing field: id', undefined],
    ['an empty id', '{"type":"ping","id":""}', 'invalid field: id', undefined],
    ['an id over 128 characters', JSON.stringify({ type: 'ping', id: 'i'.repeat(129) }), 'invalid field: id', undefined],
    ['a string timestamp', '{"type":"ping","id":"x3","timestamp":"now"}', 'invalid field: timestamp', 'x3'],
    ['an array data', '{"type":"ping","id":"x4","data":[]}', 'invalid field: data', 'x4'],
  ])('refuses %s', (_name, text, message, requestId) => {
    expect(refusal(() => parseEnvelope(text))).toMatchObject({ message, requestId });
  });

  it('fills in an omitted timestamp and data', () => {
    const before = Date.now();
    const parsed = parseEnvelope('{"type":"ping","id":"p"}');
    expect(parsed).toMatchObject({ type: 'ping', id: 'p', data: {} });
    expect(parsed.timestamp).toBeGreaterThanOrEqual(before);
  });
});

describe('parseSubscribe', () => {
  it('reads types (de-duplicated) and since as an event id or a time', () => {
    expect(parseSubscribe(envelope('subscribe', {}))).toEqual({ types: undefined, since: undefined });
    expect(parseSubscribe(envelope('subscribe', { types: ['BlockScanned', 'BlockScanned', 'InvoicePaid'] }))).toEqual({
      types: ['BlockScanned', 'InvoicePaid'],
      since: undefined,
    });
    expect(parseSubscribe(envelope('subscribe', { since: 'evt-12' })).since).toEqual({ id: 'evt-12' });
    expect(parseSubscribe(envelope('subscribe', { since: 1763740000000 })).since).toEqual({ time: 1763740000000 });
  });

  it.each([
    [{ types: 'BlockScanned' }, 'invalid field: data.types'],
    [{ types: ['Nope'] }, 'invalid field: data.types'],
    [{ types: ['ping'] }, 'invalid field: data.types'],
    [{ since: -5 }, 'invalid field: data.since'],
    [{ since: 1.5 }, 'invalid field: data.since'],
    [{ since: '' }, 'invalid field: data.since'],
    [{ since: { id: 'x' } }, 'invalid field: data.since'],
  ])('refuses %j', (data, message) => {
    expect(refusal(() => parseSubscribe(envelope('subscribe', data))).message).toBe(message);
  });
});

describe('error messages', () => {
  it('carries the code, the request id and the extra fields of REPLAY_UNAVAILABLE', () => {
    const err = new InvalidMessageError('replay unavailable', 'since is older than the log', 's-1', 'REPLAY_UNAVAILABLE', {
      oldest_id: 'e-1',
      oldest_timestamp: 5,
    });
    const message = errorMessageOf(err);
    expect(message).toMatchObject({
      type: 'error',
      id: 's-1',
      data: {
        code: 'REPLAY_UNAVAILABLE',
        message: 'replay unavailable',
        details: 'since is older than the log',
        oldest_id: 'e-1',
        oldest_timestamp: 5,
      },
    });
    expect(() => assertMessage(message)).not.toThrow();
    expect(createErrorMessage('CONNECTION_ERROR', 'relay r is unreachable', 'closed').data.code).toBe('CONNECTION_ERROR');
  });

  it('builds typed messages that pass their own validation', () => {
    const data: DataOf<'PaymentSpent'> = valid.PaymentSpent;
    const message = createMessage('PaymentSpent', data);
    expect(message.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(assertMessage(message)).toBe(message);
  });
});
