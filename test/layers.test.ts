import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/*
 * The layers of ARCHITECTURE.md, as `npm run lint` checks them with dependency-cruiser
 * (.dependency-cruiser.cjs). The fixture under test/fixtures/layers/ is a small `src/` that
 * breaks each rule once; the checker must name every break, and nothing else.
 */

const root = fileURLToPath(new URL('../', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/layers/', import.meta.url));
const checker = fileURLToPath(new URL('../node_modules/dependency-cruiser/bin/dependency-cruise.mjs', import.meta.url));

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
}

/** The rules the checker holds broken in `cwd`'s src/. */
function check(cwd: string): { errors: number; violations: Violation[] } {
  const run = spawnSync(process.execPath, [checker, 'src', '--config', `${root}.dependency-cruiser.cjs`, '--output-type', 'json'], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const { summary } = JSON.parse(run.stdout) as { summary: { error: number; violations: Violation[] } };
  return { errors: summary.error, violations: summary.violations.filter((v) => v.rule.severity === 'error') };
}

test('the checker refuses a back import, a cycle, a reach past a public face and an unlisted folder', () => {
  const { errors, violations } = check(fixture);
  assert.equal(errors, 4);
  const found = violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
  assert.deepEqual(found, [
    'layer:infra: src/infra/back-import.ts -> src/chat/index.ts',
    'listed-layer: src/trades/unlisted.ts -> src/auctions/index.ts',
    'no-cycle: src/trades/cycle-a.ts -> src/trades/cycle-b.ts',
    'public-face: src/trades/deep-import.ts -> src/chat/topic.ts',
  ]);
});

test('src/ keeps its layers: no rule broken, no reach past a public face', () => {
  const { errors, violations } = check(root);
  assert.deepEqual(
    violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`),
    [],
  );
  assert.equal(errors, 0);
});
