import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runAdminCli } from '../src/cli/admin.js';
import { allAdminMethods } from '../src/domains.js';
import type { TestServer } from './helpers.js';
import { ADMIN_KEY, smallWorld, startAdminServer } from './admin-support.js';

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

async function cli(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const status = await runAdminCli(argv, { stdout: (t) => (stdout += `${t}\n`), stderr: (t) => (stderr += `${t}\n`), env });
  return { status, stdout, stderr };
}

async function withListeningServer(run: (server: TestServer, env: NodeJS.ProcessEnv, dir: string) => Promise<void>): Promise<void> {
  const server = await startAdminServer({ world: await smallWorld() });
  const dir = mkdtempSync(join(tmpdir(), 'gp-admin-cli-'));
  try {
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = server.app.server.address() as AddressInfo;
    await run(server, { ADMIN_URL: `http://127.0.0.1:${port}`, ADMIN_KEY }, dir);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('every admin method has a command with --help that lists its parameters', async () => {
  const general = await cli(['--help']);
  assert.equal(general.status, 0);
  for (const method of allAdminMethods()) {
    const command =
      method.name === 'admin.importWorld'
        ? 'import'
        : method.name === 'admin.exportWorld'
          ? 'export'
          : method.name.slice(6).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    assert.ok(general.stdout.includes(`  ${command} `), `${command} is listed`);
    const help = await cli([command, '--help']);
    assert.equal(help.status, 0, command);
    assert.ok(help.stdout.startsWith(`Usage: game-platform admin ${command}`), help.stdout);
    for (const param of Object.keys(method.params.properties)) {
      if (command === 'import' && param === 'world') continue;
      assert.ok(help.stdout.includes(`--${param.replace(/_/g, '-')} `), `${command} --help lists ${param}`);
    }
    // Every option's text stands apart from its label, however long the label.
    for (const line of help.stdout.split('\n').filter((l) => l.startsWith('  --')))
      assert.match(line, /^ {2}--\S+( \S+)?( {2,}\S.*)?$/, `${command}: ${line}`);
  }
});

test('credentials in the server address go as basic authentication and never into a message', async () => {
  const seen: (string | undefined)[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers.authorization);
    response.setHeader('content-type', 'application/json');
    response.end('{"code":0,"data":{"user_id":1}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const run = await cli(['kill-sessions', '--user-id', '1'], { ADMIN_KEY, ADMIN_URL: `http://ops:s%40cret@127.0.0.1:${port}/` });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(seen, [`Basic ${Buffer.from('ops:s@cret').toString('base64')}`]);
  } finally {
    server.close();
  }
  const unreachable = await cli(['get-user', '--user-id', '1'], { ADMIN_KEY, ADMIN_URL: 'http://ops:s3cret@127.0.0.1:1' });
  assert.equal(unreachable.status, 1);
  assert.match(unreachable.stderr, /cannot reach http:\/\/127\.0\.0\.1:1: /);
  assert.ok(!unreachable.stderr.includes('s3cret') && !unreachable.stderr.includes('ops'), unreachable.stderr);
  for (const [address, said] of [
    ['ftp://127.0.0.1', /--url: not an http:\/\/ or https:\/\/ address/],
    ['http://ops:s3cret@127.0.0.1:99999', /--url: not an http:\/\/ or https:\/\/ address/],
    ['http://ops:s3/cret@127.0.0.1:1', /--url: not an http:\/\/ or https:\/\/ address/],
    ['//ops:s3cret@127.0.0.1:1', /--url: not an http:\/\/ or https:\/\/ address/],
    ['http://ops:%zz@127.0.0.1:1', /--url: the user or password before @ is not well percent-encoded/],
  ] as const) {
    const run = await cli(['get-user', '--user-id', '1'], { ADMIN_KEY, ADMIN_URL: address });
    assert.equal(run.status, 2, address);
    assert.match(run.stderr, said);
    assert.ok(!run.stderr.includes('s3') && !run.stderr.includes('ops'), run.stderr);
  }
  // A password with a "/" typed unencoded makes the rest a path: messages name the origin alone.
  const mistyped = await cli(['get-user', '--user-id', '1'], { ADMIN_KEY, ADMIN_URL: 'http://127.0.0.1:1/ops:s3cret@elsewhere' });
  assert.equal(mistyped.status, 1);
  assert.match(mistyped.stderr, /cannot reach http:\/\/127\.0\.0\.1:1: /);
  assert.ok(!mistyped.stderr.includes('s3cret'), mistyped.stderr);
});

test('the admin key never follows a redirect', async () => {
  const elsewhere: (string | undefined)[] = [];
  const other = createServer((request, response) => {
    elsewhere.push(request.headers['x-admin-key'] as string | undefined);
    response.end('{"code":0}');
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  const redirecting = createServer((_request, response) => {
    response.writeHead(307, { location: `http://127.0.0.1:${(other.address() as AddressInfo).port}/api/admin.getUser` });
    response.end();
  });
  await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
  try {
    const run = await cli(['get-user', '--user-id', '1'], {
      ADMIN_KEY,
      ADMIN_URL: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`,
    });
    assert.equal(run.status, 1);
    assert.equal(
      run.stderr.trim(),
      `game-platform admin get-user: http://127.0.0.1:${(redirecting.address() as AddressInfo).port} is not a game-platform server's API: ` +
        'it answered a redirect (HTTP 307), not followed: give --url the address it leads to',
    );
    assert.deepEqual(elsewhere, []);
  } finally {
    redirecting.close();
    other.close();
  }
});

test('export never writes a world the server did not answer', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gp-cli-export-'));
  const server = createServer((_request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end('{"code":0,"data":{}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const file = join(dir, 'backup.json');
    writeFileSync(file, '{"precious":1}');
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const run = await cli(['export', file], { ADMIN_KEY, ADMIN_URL: origin });
    assert.equal(run.status, 1);
    assert.equal(
      run.stderr.trim(),
      `game-platform admin export: ${origin} is not a game-platform server's API: it answered HTTP 200 with data that is not what admin.exportWorld answers`,
    );
    assert.equal(readFileSync(file, 'utf8'), '{"precious":1}');
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an answer that is not the server's envelope fails, whatever its body says", async () => {
  const answers: [status: number, body: string, said: string][] = [
    [300, '{"code":0}', 'it answered a redirect (HTTP 300), not followed: give --url the address it leads to'],
    [404, '{"code":0,"data":{}}', "it answered HTTP 404 with a body that is not the server's answer"],
    [200, '[]', "it answered HTTP 200 with a body that is not the server's answer"],
    [200, '{"ok":true}', "it answered HTTP 200 with a body that is not the server's answer"],
    [502, '<html>bad gateway</html>', 'it answered HTTP 502 without a JSON body'],
    [200, '{"code":0}', 'it answered HTTP 200 with data that is not what admin.getUser answers'],
    [200, '{"code":0,"data":{"user_id":"one"}}', 'it answered HTTP 200 with data that is not what admin.getUser answers'],
  ];
  let next = 0;
  const server = createServer((_request, response) => {
    const [status, body] = answers[next++]!;
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const [status, , said] of answers) {
      const run = await cli(['get-user', '--user-id', '1'], { ADMIN_KEY, ADMIN_URL: origin });
      assert.equal(run.status, 1, `HTTP ${status}`);
      assert.equal(run.stderr.trim(), `game-platform admin get-user: ${origin} is not a game-platform server's API: ${said}`);
      assert.equal(run.stdout, '');
    }
  } finally {
    server.close();
  }
});

test('commands call the server and print the answer as JSON', () =>
  withListeningServer(async (server, env) => {
    const created = await cli(
      ['create-user', '--email', 'cli@example.com', '--password', 'a password from the cli', '--nick', 'Cli', '--vip'],
      env,
    );
    assert.equal(created.status, 0, created.stderr);
    const { user } = JSON.parse(created.stdout);
    assert.equal(user.email, 'cli@example.com');
    assert.equal(user.vip, 1);

    const banned = await cli(['ban-user', `--user-id=${user.user_id}`], env);
    assert.equal(JSON.parse(banned.stdout).user.global_ban, 1);
    const granted = await cli(
      ['grant-items', '--user_id', 'alice', '--item-proto-id', '100', '--copies', '2', '--ts-can-trade', '-1'],
      env,
    );
    assert.equal(JSON.parse(granted.stdout).item_ids.length, 2);

    const log = await cli(['audit-log', '--count', '2'], env);
    assert.deepEqual(
      JSON.parse(log.stdout).entries.map((e: any) => e.action),
      ['admin.grantItems', 'admin.banUser'],
    );
    assert.ok(!log.stdout.includes('a password from the cli'));
    const row = await server.db.kysely
      .selectFrom('users')
      .select('global_ban')
      .where('user_id', '=', user.user_id)
      .executeTakeFirstOrThrow();
    assert.equal(row.global_ban, 1);
  }));

test('API errors print the envelope on standard error and exit 1; usage errors exit 2', () =>
  withListeningServer(async (_server, env) => {
    const missing = await cli(['get-user', '--user-id', '404'], env);
    assert.equal(missing.status, 1);
    assert.equal(JSON.parse(missing.stderr).code, 101);

    const wrongKey = await cli(['get-user', '--user-id', '1'], { ...env, ADMIN_KEY: 'this-is-not-the-admin-key' });
    assert.equal(wrongKey.status, 1);
    assert.equal(JSON.parse(wrongKey.stderr).code, 1);
    const flagWins = await cli(['get-user', '--user-id', '1', '--admin-key', ADMIN_KEY], {
      ...env,
      ADMIN_KEY: 'this-is-not-the-admin-key',
    });
    assert.equal(flagWins.status, 0);

    assert.equal((await cli(['no-such-command'], env)).status, 2);
    assert.equal((await cli(['get-user'], env)).status, 2);
    assert.equal((await cli(['get-user', '--user-id', '1', '--colour', 'red'], env)).status, 2);
    assert.equal((await cli(['get-user', '--user-id', '1', 'extra'], env)).status, 2);
    assert.equal((await cli(['get-user', '--user-id', '1'], { ADMIN_URL: env.ADMIN_URL })).status, 2, 'no key');
    const unreachable = await cli(['get-user', '--user-id', '1', '--url', 'http://127.0.0.1:9'], env);
    assert.equal(unreachable.status, 1);
    assert.match(unreachable.stderr, /cannot reach/);
  }));

test('export writes the world to a file, import reads one, and --<parameter>-file reads a value from a file', () =>
  withListeningServer(async (server, env, dir) => {
    const file = join(dir, 'world.json');
    const exported = await cli(['export', file], env);
    assert.equal(exported.status, 0, exported.stderr);
    assert.equal(JSON.parse(exported.stdout).file, file);
    const world = JSON.parse(readFileSync(file, 'utf8'));
    assert.deepEqual(
      world.users.map((u: any) => u.nick),
      ['Alice', 'Bob', 'Carol'],
    );

    const toStdout = await cli(['export'], env);
    assert.deepEqual(JSON.parse(toStdout.stdout), world);

    world.users[0].nick = 'Alice from a file';
    writeFileSync(file, JSON.stringify(world));
    const imported = await cli(['import', file, '--mode', 'replace'], env);
    assert.equal(imported.status, 0, imported.stderr);
    assert.equal(JSON.parse(imported.stdout).mode, 'replace');
    const row = await server.db.kysely.selectFrom('users').select('nick').where('user_id', '=', 1).executeTakeFirstOrThrow();
    assert.equal(row.nick, 'Alice from a file');

    const protoFile = join(dir, 'proto.json');
    writeFileSync(protoFile, JSON.stringify({ item_proto_id: 900, type: 0, title: 'From a file' }));
    const upserted = await cli(['upsert-item-proto', '--item-proto-file', protoFile], env);
    assert.equal(upserted.status, 0, upserted.stderr);
    assert.equal(JSON.parse(upserted.stdout).item_proto.title, 'From a file');

    assert.equal((await cli(['import'], env)).status, 2);
    assert.equal((await cli(['import', join(dir, 'missing.json')], env)).status, 2);
  }));

test("an import above the server's body limit explains what to do instead", () =>
  withListeningServer(async (_server, env, dir) => {
    const file = join(dir, 'big.json');
    writeFileSync(
      file,
      JSON.stringify({ collections: Array.from({ length: 3000 }, (_, i) => ({ collection_id: i + 1, title: `Collection ${i + 1}` })) }),
    );
    const run = await cli(['import', file], env);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /game-platform import FILE/);
  }));
