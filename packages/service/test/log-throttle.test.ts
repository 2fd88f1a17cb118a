import { throttledLog } from '../src';

describe('throttledLog', () => {
  afterEach(() => jest.restoreAllMocks());

  it('writes the first call at once, then at most one line a period, each counting the calls it stands for', () => {
    const clock = jest.spyOn(Date, 'now').mockReturnValue(1_000_000);
    const lines: Array<[Record<string, unknown>, string]> = [];
    const log = throttledLog((fields, message) => lines.push([fields, message]), { everyMs: 5_000, countAs: 'errors' });
    log({ n: 1 }, 'redis connection error');
    log({ n: 2 }, 'redis connection error');
    log({ n: 3 }, 'redis connection error');
    clock.mockReturnValue(1_004_999);
    log({ n: 4 }, 'redis connection error');
    expect(lines).toEqual([[{ n: 1, errors: 1 }, 'redis connection error']]);
    clock.mockReturnValue(1_005_000);
    log({ n: 5 }, 'redis connection error');
    // The line that goes out is the call's own, with the three held back since the first.
    expect(lines[1]).toEqual([{ n: 5, errors: 4 }, 'redis connection error']);
    clock.mockReturnValue(1_020_000);
    log({ n: 6 }, 'redis connection error');
    expect(lines[2]).toEqual([{ n: 6, errors: 1 }, 'redis connection error']);
  });
});
