import { describe, expect, it } from 'vitest';
import { rootCgroupCpuNs } from '../../bench/browser.js';

/** A file system of the given files; any other path throws as a missing file does. */
const files =
  (contents: Record<string, string>) =>
  (path: string): string => {
    const text = contents[path];
    if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return text;
  };

describe('rootCgroupCpuNs: the CPU time of every process, in nanoseconds', () => {
  it('reads cgroup v1 (cpuacct.usage, nanoseconds)', () => {
    expect(rootCgroupCpuNs(files({ '/sys/fs/cgroup/cpuacct/cpuacct.usage': '75942174775693\n' }))).toBe(75942174775693);
  });

  it('reads cgroup v2 (cpu.stat usage_usec, microseconds)', () => {
    const stat = 'usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n';
    expect(rootCgroupCpuNs(files({ '/sys/fs/cgroup/cpu.stat': stat }))).toBe(1234567000);
  });

  it('is undefined where neither can be read, or what is there is not a count', () => {
    expect(rootCgroupCpuNs(files({}))).toBeUndefined();
    expect(
      rootCgroupCpuNs(
        files({ '/sys/fs/cgroup/cpuacct/cpuacct.usage': 'max\n', '/sys/fs/cgroup/cpu.stat': 'nr_periods 0\n' }),
      ),
    ).toBeUndefined();
  });
});
