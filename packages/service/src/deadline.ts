/**
 * `work`, or a rejection with `Error(message)` once `ms` have passed without it settling (the
 * timer is cleared either way). `work` itself goes on: what it does later is its own (a late
 * answer is dropped by whoever waits for it). For a dependency that may hang: a Redis command, a
 * disk write behind a readiness probe.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
