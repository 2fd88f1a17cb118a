import {
  EnvelopeError,
  errorStatus,
  errorText,
  initialState,
  successReply,
  splitSuccessReply,
  isNotification,
  parseCall,
  replyObject,
  splitJsonArray,
  jsonArrayElements,
  jsonStringEnd,
  JsonByte,
  JSON_BYTE_CLASS,
  successText,
} from '../src';

describe('parseCall', () => {
  it('reads method and params, defaulting params to []', () => {
    const state = initialState();
    expect(parseCall({ jsonrpc: '2.0', id: 'a', method: 'getblockcount' }, state)).toEqual({ method: 'getblockcount', params: [] });
    expect(state).toEqual({ id: { value: 'a' }, version: '2.0' });
  });

  it.each([
    [42, 'Invalid Request object'],
    [{ id: 1, jsonrpc: 2, method: 'x' }, 'jsonrpc field must be a string'],
    [{ id: 1, jsonrpc: '3.0', method: 'x' }, 'JSON-RPC version not supported'],
    [{ id: 1 }, 'Missing method'],
    [{ id: 1, method: 7 }, 'Method must be a string'],
    [{ id: 1, method: 'x', params: 'p' }, 'Params must be an array or object'],
  ])('refuses %j with -32600 "%s", as Core does', (request, message) => {
    expect(() => parseCall(request, initialState())).toThrow(new EnvelopeError(-32600, message));
  });

  it('keeps the previous id for a non-object batch element (Core quirk, batch.mixed)', () => {
    const state = initialState();
    parseCall({ id: 'b6', method: 'x' }, state);
    expect(() => parseCall(42, state)).toThrow(EnvelopeError);
    expect(state.id).toEqual({ value: 'b6' });
  });

  it('treats a 2.0 request without id as a notification, and id null as present', () => {
    const state = initialState();
    parseCall({ jsonrpc: '2.0', method: 'x' }, state);
    expect(isNotification(state)).toBe(true);
    parseCall({ jsonrpc: '2.0', id: null, method: 'x' }, state);
    expect(isNotification(state)).toBe(false);
  });
});

describe('replies', () => {
  it('shapes 1.0 and 2.0 replies like Core', () => {
    const v1 = { id: { value: 'x' }, version: '1.0' as const };
    const v2 = { id: { value: 'x' }, version: '2.0' as const };
    expect(successText('112', v1)).toBe('{"result":112,"error":null,"id":"x"}');
    expect(successText('112', v2)).toBe('{"jsonrpc":"2.0","result":112,"id":"x"}');
    expect(errorText(-32601, 'Method not found', v1)).toBe('{"result":null,"error":{"code":-32601,"message":"Method not found"},"id":"x"}');
    expect(JSON.stringify(replyObject(null, { code: -5, message: 'm' }, v2))).toBe(
      '{"jsonrpc":"2.0","error":{"code":-5,"message":"m"},"id":"x"}',
    );
    expect(replyObject(1, null, { id: undefined, version: '1.0' })).toEqual({ result: 1, error: null });
  });

  it('answers 1.0 errors with 400/404/500 and 2.0 method errors with 200', () => {
    const v1 = initialState();
    const v2 = { id: { value: 1 }, version: '2.0' as const };
    expect([errorStatus(-32600, v1), errorStatus(-32601, v1), errorStatus(-5, v1)]).toEqual([400, 404, 500]);
    expect(errorStatus(-32601, v2)).toBe(200);
    expect(errorStatus(-32600, v2, true)).toBe(400);
  });
});

describe('jsonArrayElements', () => {
  it('finds each element of an array in its bytes, blanks left out, multi-byte characters and escapes included', () => {
    const cases: [string, string[] | undefined][] = [
      [' [{"a":"x,]"}, 50.00000000 ,[1,2]]\n', ['{"a":"x,]"}', '50.00000000', '[1,2]']],
      ['[]', []],
      ['[ ]', []],
      ['[1]', ['1']],
      [
        '[{"result":"é,\\"]😀","error":null,"id":1},{"result":null,"error":{"code":-8,"message":"x"},"id":"ü"}]\n',
        ['{"result":"é,\\"]😀","error":null,"id":1}', '{"result":null,"error":{"code":-8,"message":"x"},"id":"ü"}'],
      ],
      ['[ 1 ,\t2\r\n, "a\\\\"]', ['1', '2', '"a\\\\"']],
      ['{"a":1}', undefined],
      ['  ', undefined],
      ['[1,2', undefined],
      ['x[1]', undefined],
    ];
    for (const [text, expected] of cases) {
      const bytes = Buffer.from(text);
      const bounds = jsonArrayElements(bytes);
      const texts =
        bounds === undefined ? undefined : bounds.flatMap((b, i) => (i % 2 === 0 ? [bytes.toString('utf8', b, bounds[i + 1])] : []));
      expect([text, texts]).toEqual([text, expected]);
    }
  });
});

/** The byte-by-byte scan jsonArrayElements replaced (one comparison chain a byte, strings read to the end): the reference. */
function referenceElements(bytes: Uint8Array): number[] | undefined {
  const blank = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
  let i = 0;
  while (i < bytes.length && blank(bytes[i])) i++;
  if (bytes[i] !== 0x5b) return undefined;
  const bounds: number[] = [];
  let depth = 0;
  let start = i + 1;
  let inString = false;
  const push = (from: number, to: number, always: boolean) => {
    while (from < to && blank(bytes[from])) from++;
    while (to > from && blank(bytes[to - 1])) to--;
    if (always || to > from) bounds.push(from, to);
  };
  for (; i < bytes.length; i++) {
    const c = bytes[i] as number;
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) depth++;
    else if (c === 0x5d || c === 0x7d) {
      depth--;
      if (depth === 0) {
        push(start, i, false);
        return bounds;
      }
    } else if (c === 0x2c && depth === 1) {
      push(start, i, true);
      start = i + 1;
    }
  }
  return undefined;
}

describe('jsonStringEnd and JSON_BYTE_CLASS', () => {
  it('finds the closing quote of a string, short or long, over escapes; the length of the text when there is none', () => {
    const pad = 'p'.repeat(30);
    const cases: [string, number][] = [
      ['""', 1],
      ['"a\\"b"', 5],
      [`"${pad}\\\\"x`, 33],
      [`"${pad}\\"x"`, 34],
      [`"${pad}\\\\\\"x"`, 36],
      [`"${pad}`, 31],
      [`"${pad}\\`, 32],
    ];
    for (const [text, end] of cases) expect([text, jsonStringEnd(Buffer.from(text), 0)]).toEqual([text, end]);
  });

  it('classes every byte as a JSON scanner reads it outside strings', () => {
    const classOf = (c: string) => JSON_BYTE_CLASS[c.charCodeAt(0)];
    expect([' ', '\t', '\n', '\r'].map(classOf)).toEqual(Array(4).fill(JsonByte.BLANK));
    expect(['[', '{', ']', '}', ',', ':', '"'].map(classOf)).toEqual([
      JsonByte.OPEN,
      JsonByte.OPEN,
      JsonByte.CLOSE,
      JsonByte.CLOSE,
      JsonByte.COMMA,
      JsonByte.COLON,
      JsonByte.QUOTE,
    ]);
    expect(['0', '9', '-'].map(classOf)).toEqual(Array(3).fill(JsonByte.NUMBER));
    expect(['t', '.', 'e', '~', '!'].map(classOf)).toEqual(Array(5).fill(JsonByte.OTHER));
    expect([0x00, 0x1f, 0x7f, 0x80, 0xff].map((c) => JSON_BYTE_CLASS[c])).toEqual(Array(5).fill(JsonByte.UNPRINTABLE));
    // The classes a scanner steps over without a look come before QUOTE.
    expect(Math.max(JsonByte.OTHER, JsonByte.BLANK, JsonByte.COLON, JsonByte.NUMBER, JsonByte.UNPRINTABLE)).toBeLessThan(JsonByte.QUOTE);
  });
});

describe('jsonArrayElements against the byte-by-byte scan', () => {
  it('splits long strings with quotes and runs of backslashes anywhere, short and long, as the byte scan does', () => {
    // Every string of up to three pieces: escapes at every offset around the 16 bytes read one by
    // one, far past them, and in multi-byte text; each in two shapes of element, several a reply.
    const pieces = ['a', '"', '\\', '\\"', 'é', '😀', ',', ']', '}', 'x'.repeat(15), 'y'.repeat(40)];
    const texts = [''];
    for (let length = 1; length <= 3; length++)
      for (let k = 0; k < pieces.length ** length; k++) {
        let text = '';
        for (let p = 0, rest = k; p < length; p++, rest = Math.floor(rest / pieces.length)) text += pieces[rest % pieces.length];
        texts.push(text);
      }
    for (let at = 0; at < texts.length; at += 5) {
      const chunk = texts.slice(at, at + 5);
      const elements = chunk.map((text, e) => (e % 2 === 0 ? { result: text, error: null, id: e } : [text, { a: text }, 1.5]));
      const bytes = Buffer.from(`[${elements.map((v) => JSON.stringify(v)).join(at % 2 === 0 ? ',' : ' ,\n ')}]\n`);
      expect([chunk, jsonArrayElements(bytes)]).toEqual([chunk, referenceElements(bytes)]);
      const bounds = jsonArrayElements(bytes) as number[];
      expect(bounds.length).toBe(2 * elements.length);
      for (const [e, element] of elements.entries())
        expect(JSON.parse(bytes.toString('utf8', bounds[2 * e], bounds[2 * e + 1]))).toEqual(element);
    }
  });

  it('reads raw runs of backslashes before a quote past the first bytes of a string', () => {
    const pad = 'p'.repeat(20);
    for (let run = 0; run <= 5; run++) {
      // An odd run escapes the quote (the string goes on), an even one does not.
      const inner = `${pad}${'\\'.repeat(run)}"`;
      const text = run % 2 === 1 ? `["${inner}tail",2]` : `["${inner},2]`;
      const bytes = Buffer.from(text);
      expect([text, jsonArrayElements(bytes)]).toEqual([text, referenceElements(bytes)]);
    }
    // Cut short inside a long string, and inside an escape.
    for (const text of [`["${pad}`, `["${pad}\\`, `["${pad}\\"`, `[1,"${pad}\\\\`])
      expect(jsonArrayElements(Buffer.from(text))).toBeUndefined();
  });

  it('splits a reply with a megabyte string (a raw block) without reading it byte by byte', () => {
    const hex = 'ab'.repeat(500_000);
    const bytes = Buffer.from(`[{"result":"${hex}","error":null,"id":1},{"result":"${hex}","error":null,"id":2}]\n`);
    expect(jsonArrayElements(bytes)).toEqual(referenceElements(bytes));
  });
});

describe('splitJsonArray', () => {
  it('splits an array into the exact texts of its elements', () => {
    expect(splitJsonArray(' [{"a":"x,]"}, 50.00000000 ,[1,2]]\n')).toEqual(['{"a":"x,]"}', '50.00000000', '[1,2]']);
    expect(splitJsonArray('[]')).toEqual([]);
    expect(splitJsonArray('{"a":1}')).toBeUndefined();
  });

  it('splits the bytes of an array as its text, multi-byte characters included', () => {
    const text = '[{"result":"é,\\"]😀","id":1}, 2.50000000 ]\n';
    expect(splitJsonArray(Buffer.from(text))).toEqual(splitJsonArray(text));
    expect(splitJsonArray(Buffer.from(text))).toEqual(['{"result":"é,\\"]😀","id":1}', '2.50000000']);
    expect(splitJsonArray(Buffer.from('{"a":1}'))).toBeUndefined();
  });
});

describe('splitSuccessReply and successReply', () => {
  it('refuses a reply for another id, another version or an error', () => {
    const state = { id: { value: 7 }, version: '1.0' as const };
    expect(splitSuccessReply(Buffer.from('{"result":1,"error":null,"id":7}\n'), state)?.toString()).toBe('1');
    expect(splitSuccessReply(Buffer.from('{"result":1,"error":null,"id":8}\n'), state)).toBeUndefined();
    expect(splitSuccessReply(Buffer.from('{"jsonrpc":"2.0","result":1,"id":7}\n'), state)).toBeUndefined();
    expect(splitSuccessReply(Buffer.from('{"result":null,"error":{"code":-5,"message":"x"},"id":7}\n'), state)).toBeUndefined();
    expect(splitSuccessReply(Buffer.from('{"result":1,"error":null,"id":7}'), state)).toBeUndefined();
  });

  it('wraps result bytes exactly as successText does, for each version', () => {
    for (const state of [
      initialState(),
      { id: { value: 'a"b' }, version: '2.0' as const },
      { id: { value: null }, version: '1.0' as const },
    ]) {
      const result = Buffer.from('{"hex":"00ff","n":0.00001000}');
      expect(successReply(result, state).toString()).toBe(`${successText(result.toString(), state)}\n`);
      expect(splitSuccessReply(successReply(result, state), state)?.equals(result)).toBe(true);
    }
  });
});
