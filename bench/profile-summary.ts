/**
 * Summarises a V8 CPU profile (`npm run bench -- --cpu-prof` writes them to
 * bench/.cache/profiles/): the functions with the most self time, and the project's own
 * functions with the most total time (self + callees).
 *
 *   npx tsx bench/profile-summary.ts bench/.cache/profiles/sqlite/<file>.cpuprofile [top] [--last SECONDS]
 *
 * `--last SECONDS`: only the profile's last seconds (the run's final scenario, say the
 * default-against-quiet row, where the server has served every scenario before it).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ options: { last: { type: 'string' } }, allowPositionals: true });
const [file, topArg] = positionals;
if (!file) {
  console.error('usage: tsx bench/profile-summary.ts FILE.cpuprofile [top] [--last SECONDS]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const elapsed = profile.timeDeltas.reduce((a, b) => a + b, 0);
const from = values.last === undefined ? 0 : elapsed - Number(values.last) * 1e6;
const selfTime = new Map<number, number>();
let at = 0;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  at += delta;
  if (at >= from) selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
});
const total = [...selfTime.values()].reduce((a, b) => a + b, 0);

const label = (n: Node) => {
  const path = n.callFrame.url.replace(/^file:\/\//, '');
  // Project code (run from src/ or built to dist/) reads as src/...; dependencies as node_modules/...
  const url = path.includes('/node_modules/')
    ? path.replace(/.*\/(node_modules\/)/, '$1')
    : path.replace(/.*\/(?:src|dist)\//, 'src/').replace(/.*\/bench\//, 'bench/');
  return `${n.callFrame.functionName || '(anonymous)'} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ''}`.trim();
};

const selfByLabel = new Map<string, number>();
const totalByLabel = new Map<string, number>();
for (const [id, t] of selfTime) {
  const node = byId.get(id)!;
  selfByLabel.set(label(node), (selfByLabel.get(label(node)) ?? 0) + t);
  // Total time: count each distinct frame once per sample stack.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur)!);
    if (seen.has(l)) continue;
    seen.add(l);
    totalByLabel.set(l, (totalByLabel.get(l) ?? 0) + t);
  }
}

const idle = selfByLabel.get('(idle)') ?? 0;
const busy = total - idle;
selfByLabel.delete('(idle)');
const pct = (t: number) => `${((t / busy) * 100).toFixed(1).padStart(5)}%`;
console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy\n\nself time (share of the busy time):`);
for (const [l, t] of [...selfByLabel].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${l}`);
console.log('\ntotal time, project code:');
for (const [l, t] of [...totalByLabel]
  .filter(([l]) => /(^| )src\//.test(l))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top))
  console.log(`${pct(t)}  ${l}`);
