#!/usr/bin/env node
// Runs the whole suite on SQLite, then again on PostgreSQL when TEST_DATABASE_URL is set.
// Extra arguments select test files (paths or substrings of paths).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return findTests(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const filters = process.argv.slice(2);
const files = findTests('test')
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

const runs = [{ name: 'sqlite', env: { TEST_DB: 'sqlite' } }];
if (process.env.TEST_DATABASE_URL) runs.push({ name: 'postgres', env: { TEST_DB: 'postgres' } });
else console.log('TEST_DATABASE_URL is not set: the PostgreSQL run is skipped');

const outcomes = [];
for (const run of runs) {
  console.log(`\n=== ${run.name}: ${files.length} test files ===`);
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
    { stdio: 'inherit', env: { ...process.env, ...run.env } },
  );
  outcomes.push({ name: run.name, passed: result.status === 0 });
}
// node's own summary (tests, pass, fail, ...) is printed above for each run; this is the verdict of all runs.
console.log(`\n=== ${outcomes.map((o) => `${o.name}: ${o.passed ? 'passed' : 'FAILED'}`).join(', ')} ===`);
process.exit(outcomes.every((o) => o.passed) ? 0 : 1);
