import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SERVER_SETTINGS, envUsage, flagUsage } from '../src/cli/settings.js';
import { allMethods } from '../src/domains.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

test('the README gives the two commands', () => {
  assert.ok(readme.includes('npm ci && npm start'));
  assert.ok(readme.includes('npm ci && npm test'));
});

/** Rows of the README's configuration table: flag, variable and default as written. */
function configurationRows(): { flag: string; env: string; shownDefault: string }[] {
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Command line'));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `--'))
    .map((line) => {
      const [flag, env, shownDefault] = line.split(' | ').map((cell) => cell.replace(/^\| /, '').trim());
      return { flag, env, shownDefault };
    });
}

test('the README configuration table has exactly the flags of serve, each with its variable and default', () => {
  const rows = configurationRows();
  const expected = SERVER_SETTINGS.map((s) => ({ flag: `\`${flagUsage(s)}\``, env: `\`${envUsage(s)}\`` }));
  assert.deepEqual(
    rows.map(({ flag, env }) => ({ flag, env })),
    expected,
    'one row per setting, in the order of serve --help',
  );
  for (const setting of SERVER_SETTINGS) {
    const row = rows.find((r) => r.flag.startsWith(`\`--${setting.flag}`))!;
    // Defaults that are values (numbers, addresses, URLs) are written as code and must match.
    if (row.shownDefault.startsWith('`')) assert.equal(row.shownDefault, `\`${setting.shownDefault}\``, `default of --${setting.flag}`);
    else assert.ok(!/^[\d.:/]+$/.test(setting.shownDefault ?? ''), `the default of --${setting.flag} is a value: write it as code`);
  }
});

test('the README lists every method the server has', () => {
  for (const method of allMethods()) assert.ok(readme.includes(`\`${method.name}\``), `README lists ${method.name}`);
});
