import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import semver from 'semver';

/** The Node versions the package declares, and what every installed package says it needs. */

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
const declared: string = JSON.parse(read('package.json')).engines.node;
const lock = JSON.parse(read('package-lock.json')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

test('the declared Node versions are a valid range, and the one running the tests is among them', () => {
  assert.ok(semver.validRange(declared), declared);
  assert.ok(semver.satisfies(process.version, declared), `${process.version} is outside ${declared}`);
});

test('every locked package, dependencies of dependencies included, accepts every declared Node version', () => {
  const refusing: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    const needs = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (path === '' || needs === undefined) continue;
    if (!semver.subset(declared, needs)) refusing.push(`${path.replace(/^.*node_modules\//, '')}@${entry.version} needs ${needs}`);
  }
  assert.deepEqual(refusing, [], `these refuse some of ${declared}`);
});

test('.nvmrc names a Node version the package declares', () => {
  const version = read('.nvmrc').trim();
  assert.ok(semver.intersects(`${version}.x`, declared), `.nvmrc ${version} and ${declared}`);
});
