import { readFileSync } from 'node:fs';

/**
 * What a process uses, read from Linux's /proc: CPU seconds so far, resident memory now and at
 * its peak, and its proportional share (PSS: shared pages divided among the processes sharing
 * them, so Postgres's shared buffers are not counted once per backend). Undefined where /proc
 * is not there or the process is gone.
 */
export interface ProcessUsage {
  cpuSeconds: number;
  rssMb: number;
  peakRssMb: number;
  pssMb: number;
}

export function processUsage(pid: number): ProcessUsage | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (text: string, key: string) => Number(text.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))?.[1] ?? 0);
    let pss = 0;
    try {
      pss = kb(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss');
    } catch {
      pss = kb(status, 'VmRSS');
    }
    return {
      // Fields 14 and 15 of stat (utime, stime), in clock ticks (100 per second on Linux).
      cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100,
      rssMb: kb(status, 'VmRSS') / 1024,
      peakRssMb: kb(status, 'VmHWM') / 1024,
      pssMb: pss / 1024,
    };
  } catch {
    return undefined;
  }
}
