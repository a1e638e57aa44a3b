#!/usr/bin/env node
// Runs the whole suite on SQLite, then again on PostgreSQL when TEST_DATABASE_URL is set and answers.
// Extra arguments select test files (paths or substrings of paths).
//
// Tests that need a component the machine may not have (Redis, Chromium, ...: test/components.ts)
// are skipped with a reason that starts with "needs "; so is the PostgreSQL run. The summary at the
// end lists them, and with TEST_REQUIRE_ALL=1 (as in .ci/run) any such skip fails the run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return findTests(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Whether PostgreSQL answers at TEST_DATABASE_URL: the reason it does not, or false. */
async function postgresAbsence(url) {
  if (!url) return 'needs PostgreSQL: TEST_DATABASE_URL is not set';
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return false;
  } catch (error) {
    const shown = new URL(url);
    if (shown.password) shown.password = '***';
    return `needs PostgreSQL: ${shown} does not answer (${error.message})`;
  } finally {
    await client.end().catch(() => {});
  }
}

const filters = process.argv.slice(2);
const files = findTests('test')
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const requireAll = process.env.TEST_REQUIRE_ALL === '1';

const runs = [{ name: 'sqlite', env: { TEST_DB: 'sqlite' } }];
const postgresMissing = await postgresAbsence(process.env.TEST_DATABASE_URL);
if (postgresMissing) console.log(`${postgresMissing}: the PostgreSQL run is skipped`);
else runs.push({ name: 'postgres', env: { TEST_DB: 'postgres' } });

const reports = mkdtempSync(join(tmpdir(), 'gp-test-report-'));
const reporter = new URL('./test-outcomes.mjs', import.meta.url).href;
const outcomes = [];
for (const run of runs) {
  console.log(`\n=== ${run.name}: ${files.length} test files ===`);
  const report = join(reports, `${run.name}.jsonl`);
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      '--test-concurrency=2',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${reporter}`,
      `--test-reporter-destination=${report}`,
      ...files,
    ],
    { stdio: 'inherit', env: { ...process.env, ...run.env } },
  );
  let tests = [];
  try {
    tests = readFileSync(report, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  } catch {
    // no report: the run's status says what happened
  }
  outcomes.push({ name: run.name, passed: result.status === 0, tests });
}
rmSync(reports, { recursive: true, force: true });

// node's own summary (tests, pass, fail, ...) is printed above for each run; what follows is about all runs.
const leaves = outcomes.flatMap((o) => o.tests.filter((t) => !t.suite || t.outcome === 'skipped'));
const count = (outcome) => leaves.filter((t) => t.outcome === outcome).length;
const missing = new Map(postgresMissing ? [[postgresMissing, ['the whole PostgreSQL run']]] : []);
for (const { name, tests } of outcomes) {
  for (const t of tests) {
    if (t.outcome !== 'skipped' || !t.reason?.startsWith('needs ')) continue;
    if (!missing.has(t.reason)) missing.set(t.reason, []);
    missing.get(t.reason).push(`${name} run: ${relative(process.cwd(), t.file ?? '')}`);
  }
}
if (missing.size > 0) {
  console.log('\nSkipped for want of a component (TEST_REQUIRE_ALL=1 makes this a failure):');
  for (const [reason, skipped] of missing) {
    console.log(`- ${reason}`);
    const tests = new Map();
    for (const where of skipped) tests.set(where, (tests.get(where) ?? 0) + 1);
    for (const [where, n] of tests) console.log(`    ${where}${n > 1 ? ` (${n} tests or groups)` : ''}`);
  }
}
const requiredMissing = requireAll && missing.size > 0;
if (requiredMissing) console.log('\nTEST_REQUIRE_ALL=1: every component must be present, and some were missing: FAILED');
const verdict = [...outcomes.map((o) => `${o.name}: ${o.passed ? 'passed' : 'FAILED'}`), ...(postgresMissing ? ['postgres: skipped'] : [])];
console.log(`\n=== ${verdict.join(', ')} ===`);
console.log(`${count('passed')} passed, ${count('failed')} failed, ${count('skipped')} skipped`);
process.exit(outcomes.every((o) => o.passed) && !requiredMissing ? 0 : 1);
