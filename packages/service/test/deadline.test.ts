import { withDeadline } from '../src';

describe('withDeadline', () => {
  it('gives the work its answer when it settles in time, and leaves no timer behind', async () => {
    await expect(withDeadline(Promise.resolve(7), 1_000, 'late')).resolves.toBe(7);
    await expect(withDeadline(Promise.reject(new Error('refused')), 1_000, 'late')).rejects.toThrow('refused');
    jest.useFakeTimers();
    try {
      await withDeadline(Promise.resolve(8), 60_000, 'late');
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('rejects with the message once the time has passed, and a late rejection of the work is not unhandled', async () => {
    let fail: (err: Error) => void = () => undefined;
    const hung = new Promise<never>((_resolve, reject) => (fail = reject));
    const started = Date.now();
    await expect(withDeadline(hung, 50, 'no answer within 50 ms')).rejects.toThrow('no answer within 50 ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    const unhandled = jest.fn();
    process.once('unhandledRejection', unhandled);
    fail(new Error('too late'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    process.off('unhandledRejection', unhandled);
    expect(unhandled).not.toHaveBeenCalled();
  });
});
