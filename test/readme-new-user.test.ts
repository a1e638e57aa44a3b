import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backupSqlite } from '../src/operations/backup.js';
import { DB_KIND, startTestServer } from './helpers.js';

/** What the README tells a new user, held to what the server and the package do. */

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };

test('the Node.js versions the README names are the ones engines accepts', () => {
  const ranges = packageJson.engines.node.split('||').map((range) => /^\^(\d+)\.(\d+)\.0$/.exec(range.trim()));
  assert.ok(ranges.every(Boolean), packageJson.engines.node);
  const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('```sh', readme.indexOf('## Quick start')));
  const sentence = quickStart.replace(/\s+/g, ' ');
  const anyRelease = ranges.filter((m) => m![2] === '0').map((m) => m![1]);
  for (const [, major, minor] of ranges.map((m) => m!))
    if (minor !== '0') assert.ok(sentence.includes(`${major}.${minor} or newer of the ${major} line`), `${major}.${minor}: ${sentence}`);
  assert.ok(sentence.includes(`any release of the ${anyRelease.join(' and ')} lines`), sentence);
});

test('no command in the README runs npx game-platform (it would rebuild the project)', () => {
  for (const [, block] of readme.matchAll(/```sh\n([\s\S]*?)```/g)) assert.doesNotMatch(block!, /npx game-platform/);
  for (const [, code] of readme.matchAll(/`([^`\n]+)`/g))
    if (code !== 'npx game-platform') assert.doesNotMatch(code!, /npx game-platform/, code);
});

test('the backup example makes its folder first, and a missing folder is refused as the README says', async () => {
  const example = /`(mkdir -p \/backups && game-platform backup \/backups\/game-\$\(date \+%F\)\.db)`/.exec(readme);
  assert.ok(example, 'the backup example creates /backups first');
  const quoted = /refused \(`(there is no directory \/backups for the backup)`\)/.exec(readme);
  assert.ok(quoted, 'the README quotes the refusal');
  if (DB_KIND !== 'sqlite') return;
  const dir = mkdtempSync(join(tmpdir(), 'gp-readme-backup-'));
  const server = await startTestServer();
  try {
    const missing = join(dir, 'backups');
    await assert.rejects(backupSqlite(server.location.url, join(missing, 'game.db')), {
      message: quoted[1]!.replace('/backups', missing),
    });
    assert.equal(existsSync(missing), false);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the sign-up example: the log holds the message as the README says, and its token confirms the address', async () => {
  const lines: string[] = [];
  const server = await startTestServer({ logLines: lines });
  try {
    const body = /api\/auth\.signup -H 'content-type: application\/json' \\\n\s+-d '(\{[^']+\})'/.exec(readme);
    assert.ok(body, 'the README signs up with curl');
    const params = JSON.parse(body[1]!) as Record<string, string>;
    assert.equal((await server.call('auth.signup', params)).body.code, 0);
    const told =
      /a warning "(mail not sent \(no SMTP server configured\)) \.\.\."\n# whose mail field holds the message: its to is (\S+), and its text holds the link\n# http:\/\/127\.0\.0\.1:8080(\/confirm-email\?token=)\.\.\. \(the token is what follows token=\)/.exec(
        readme,
      );
    assert.ok(told, 'the README says what the log holds');
    const [, message, to, link] = told;
    assert.equal(to, params.email);
    await server.services.mail.drained();
    const entry = lines.map((line) => JSON.parse(line)).find((e) => typeof e.msg === 'string' && e.msg.startsWith(message!));
    assert.ok(entry, lines.join('\n'));
    assert.equal(entry.mail.to, to);
    const token = new RegExp(`${link!.replace(/[.?]/g, '\\$&')}([A-Za-z0-9_-]+)`).exec(entry.mail.text)?.[1];
    assert.ok(token, entry.mail.text);
    assert.equal((await server.call('account.verifyEmail', { token }, { http: 'GET' })).body.code, 0);
  } finally {
    await server.close();
  }
});
