// A node:test reporter for scripts/run-tests.mjs: one JSON line per finished test or suite
// (file, name, outcome, skip reason), which the runner reads to count and to list what was skipped.
export default async function* testOutcomes(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, name, skip, todo, details } = event.data;
    const outcome = event.type === 'test:fail' ? 'failed' : skip !== undefined ? 'skipped' : todo !== undefined ? 'todo' : 'passed';
    yield `${JSON.stringify({ file, name, outcome, suite: details?.type === 'suite', reason: typeof skip === 'string' ? skip : undefined })}\n`;
  }
}
