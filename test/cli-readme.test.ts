import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SERVER_SETTINGS, REDIS_PREFIX_SETTING } from '../src/cli/settings.js';
import { allMethods } from '../src/domains.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

test('the README gives the two commands', () => {
  assert.ok(readme.includes('npm ci && npm start'));
  assert.ok(readme.includes('npm ci && npm test'));
});

test('the README configuration table has every flag and variable', () => {
  for (const setting of [...SERVER_SETTINGS, REDIS_PREFIX_SETTING]) {
    assert.ok(readme.includes(`\`--${setting.flag}`), `README mentions --${setting.flag}`);
    assert.ok(readme.includes(`\`${setting.env}`), `README mentions ${setting.env}`);
  }
});

test('the README lists every method the server has', () => {
  for (const method of allMethods()) assert.ok(readme.includes(`\`${method.name}\``), `README lists ${method.name}`);
});
