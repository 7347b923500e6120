/**
 * The machine a benchmark run happened on, and the run record that
 * bench/run.ts leaves in bench/results/run.json for the report.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';

/** Hardware and runtime of a run. */
export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  chromium: string;
  /** 1-minute load average when the record was taken (a trailing average: it includes the minute before). */
  load1: number;
}

/** One benchmark of a run. */
export interface BenchmarkRun {
  name: string;
  /** The command line that ran it. */
  command: string;
  status: 'ok' | 'failed' | 'skipped';
  seconds: number;
  exitCode: number | null;
  /** Last lines of its output when it failed. */
  tail?: string;
  /** When it started and ended (ISO); its result file should be written in between. */
  startedAt?: string;
  finishedAt?: string;
  /** 1-minute load average as it started and as it ended (other work on the machine shows here). */
  loadAtStart?: number;
  loadAtEnd?: number;
}

/** What bench/run.ts records about a run (bench/results/run.json). */
export interface RunRecord {
  startedAt: string;
  finishedAt: string;
  mode: 'full' | 'quick';
  args: string[];
  totalSeconds: number;
  machine: Machine;
  loadAtEnd: number;
  benchmarks: BenchmarkRun[];
  /**
   * Failed attempts of benchmarks that a later partial run (--only) ran again,
   * e.g. at smaller sizes: the report keeps saying that the larger run failed.
   */
  earlierFailures?: BenchmarkRun[];
}

/** The Chromium the browser benchmarks drive (same lookup as bench/browser.ts). */
export function chromiumVersion(): string {
  const path = [process.env['CHROMIUM_PATH'], '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
    (p): p is string => typeof p === 'string' && p !== '' && existsSync(p),
  );
  if (path === undefined) return 'not found';
  try {
    const out = execFileSync(path, ['--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 15_000,
    });
    return (
      out
        .trim()
        .split('\n')[0]
        ?.replace(/\s+built on.*$/, '') ?? path
    );
  } catch {
    return `${path} (version unknown)`;
  }
}

/** The 1-minute load average now, to two decimals. */
export function load1(): number {
  return Math.round((loadavg()[0] ?? 0) * 100) / 100;
}

/** Describes this machine now. */
export function describeMachine(): Machine {
  const cpu = cpus();
  return {
    cpuModel: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${platform()} ${release()}`,
    node: process.version,
    chromium: chromiumVersion(),
    load1: load1(),
  };
}
