import { availableParallelism, totalmem } from 'node:os';

/** CPU and memory figures of the relay process, for HealthSync (docs/relay.md, "Events"). */
export interface SystemStats {
  /** Share of the machine's CPU time used by this process since the previous sample, in percent (0 to 100). */
  cpu_usage: number;
  /** Resident memory of this process as a share of the machine's memory, in percent (0 to 100). */
  memory_usage: number;
  /** Resident memory of this process, in bytes. */
  memory_rss_bytes: number;
  /** V8 heap in use, in bytes. */
  heap_used_bytes: number;
}

/** Samples real figures from `process.cpuUsage()` and `process.memoryUsage()`; each call covers the time since the previous one. */
export interface StatsSampler {
  sample(): SystemStats;
}

/** Creates a sampler; the first sample covers the time since the sampler was created. */
export function createStatsSampler(): StatsSampler {
  const cores = Math.max(1, availableParallelism());
  let lastCpu = process.cpuUsage();
  let lastTime = process.hrtime.bigint();
  return {
    sample() {
      const cpu = process.cpuUsage(lastCpu);
      const time = process.hrtime.bigint();
      const elapsedUs = Number(time - lastTime) / 1000;
      lastCpu = process.cpuUsage();
      lastTime = time;
      const used = cpu.user + cpu.system;
      const cpuPercent = elapsedUs > 0 ? Math.min(100, (used / elapsedUs / cores) * 100) : 0;
      const memory = process.memoryUsage();
      return {
        cpu_usage: round2(cpuPercent),
        memory_usage: round2((memory.rss / totalmem()) * 100),
        memory_rss_bytes: memory.rss,
        heap_used_bytes: memory.heapUsed,
      };
    },
  };
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
