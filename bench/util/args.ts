/**
 * Benchmark options from argv (`--sizes 10000,100000`, `--quick`) or the
 * environment (`SIZES=10000,100000`).
 */

/**
 * Reads option `name`: `--name value` or `--name=value` in argv, else the
 * environment variable NAME (upper-cased, dashes as underscores), else undefined.
 * A bare `--name` reads as 'true'.
 * @example
 * const sizes = option('sizes'); // '10000,100000' from --sizes 10000,100000 or SIZES=…
 */
export function option(name: string, argv: readonly string[] = process.argv.slice(2)): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === `--${name}`) {
      const next = argv[i + 1];
      return next === undefined || next.startsWith('--') ? 'true' : next;
    }
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return process.env[name.toUpperCase().replaceAll('-', '_')];
}

/**
 * Reads a comma-separated list of numbers, or returns `fallback`.
 * @example
 * const sizes = numberList('sizes', [10_000, 100_000]);
 */
export function numberList(name: string, fallback: readonly number[]): number[] {
  const raw = option(name);
  if (raw === undefined || raw === 'true') return [...fallback];
  const values = raw.split(',').map((s) => Number(s.trim().replaceAll('_', '')));
  if (values.some((v) => !Number.isFinite(v)))
    throw new RangeError(`--${name} must be a comma-separated list of numbers, got ${raw}`);
  return values;
}

/**
 * Reads a number option, or returns `fallback`.
 * @example
 * const queries = numberOption('queries', 200);
 */
export function numberOption(name: string, fallback: number): number {
  const raw = option(name);
  if (raw === undefined || raw === 'true') return fallback;
  const value = Number(raw.replaceAll('_', ''));
  if (!Number.isFinite(value)) throw new RangeError(`--${name} must be a number, got ${raw}`);
  return value;
}

/**
 * True when the flag is present (`--quick`, `--quick=true`, QUICK=1).
 * @example
 * if (flag('quick')) sizes = [1000];
 */
export function flag(name: string): boolean {
  const raw = option(name);
  return raw !== undefined && raw !== 'false' && raw !== '0';
}
