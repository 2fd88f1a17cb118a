import { openLater } from '../src';

function resource() {
  const r = { closes: 0, close: async () => void r.closes++ };
  return r;
}

const notOpen = (closed: boolean) => new Error(closed ? 'closed' : 'not open');

describe('openLater', () => {
  it('opens only on open(), once, and closes what it opened once', async () => {
    const made = resource();
    let openings = 0;
    const later = openLater(async () => {
      openings++;
      return made;
    }, notOpen);
    expect(openings).toBe(0);
    expect(() => later.current()).toThrow('not open');
    await Promise.all([later.open(), later.open()]);
    expect(openings).toBe(1);
    expect(later.current()).toBe(made);
    await Promise.all([later.close(), later.close()]);
    expect(made.closes).toBe(1);
    expect(() => later.current()).toThrow('closed');
    await expect(openLater(async () => made, notOpen).close()).resolves.toBeUndefined();
  });

  it('rejects open() as the opening does, and close() after it is a no-op', async () => {
    const later = openLater<ReturnType<typeof resource>>(() => {
      throw new Error('cannot open the file');
    }, notOpen);
    await expect(later.open()).rejects.toThrow('cannot open the file');
    await expect(later.close()).resolves.toBeUndefined();
  });

  it('closes a resource that finishes opening after close(), and refuses open() once closed', async () => {
    const made = resource();
    let finish!: (r: typeof made) => void;
    const later = openLater(() => new Promise<typeof made>((r) => (finish = r)), notOpen);
    const opening = later.open();
    const closing = later.close();
    finish(made);
    await opening;
    await closing;
    expect(made.closes).toBe(1);
    expect(() => later.current()).toThrow('closed');
    const closedFirst = openLater(async () => resource(), notOpen);
    await closedFirst.close();
    await expect(closedFirst.open()).rejects.toThrow('closed');
  });
});
