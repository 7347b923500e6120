/**
 * Profiles one benchmark page in Chromium (DevTools Protocol CPU profile) and
 * prints the functions with the most self time; the profile is saved for
 * chrome://inspect or speedscope.
 * Run: npx tsx bench/profile.ts bench/pages/ingest.html count=3000 batches=64 [--out /tmp/ingest.cpuprofile] [--top 25]
 */
import { writeFileSync } from 'node:fs';
import { runPage } from './browser.js';
import { option } from './util/args.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function (name, file and line), largest first, in milliseconds. */
export function selfTimes(profile: CpuProfile): { name: string; ms: number; share: number }[] {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byNode.get(id);
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    if (node === undefined) return;
    const f = node.callFrame;
    const file = f.url.replace(/^https?:\/\/[^/]+\//, '').replace(/\?.*$/, '');
    const key = `${f.functionName || '(anonymous)'} ${file === '' ? '' : `${file}:${f.lineNumber + 1}`}`.trim();
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  return [...self].map(([name, ms]) => ({ name, ms, share: ms / total })).sort((a, b) => b.ms - a.ms);
}

const [page, ...pairs] = process.argv
  .slice(2)
  .filter((a, i, all) => !a.startsWith('--') && !(all[i - 1]?.startsWith('--') ?? false));
if (page === undefined) {
  console.error('usage: npx tsx bench/profile.ts <page.html> key=value … [--out file] [--top n]');
  process.exit(2);
}
const query = Object.fromEntries(pairs.map((p) => p.split('=') as [string, string]));
const out = option('out') ?? '/tmp/engram.cpuprofile';
const top = Number(option('top') ?? '25');
let profile: CpuProfile | undefined;
await runPage(page, query, 30 * 60_000, (p) => {
  profile = p as CpuProfile;
});
if (profile === undefined) process.exit(1);
writeFileSync(out, JSON.stringify(profile));
console.log(`profile: ${out}`);
for (const row of selfTimes(profile).slice(0, top))
  console.log(`${row.ms.toFixed(0).padStart(8)} ms ${(row.share * 100).toFixed(1).padStart(5)}%  ${row.name}`);
