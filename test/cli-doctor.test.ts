import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newDatabaseLocation, processDatabaseEnv, startTestServer, type DatabaseLocation, type TestServer } from './helpers.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { runCli } from './process-support.js';
import type { World } from '../src/world/schema.js';

/*
 * `game-platform doctor` on a database a server runs on: a clean market passes, a balance or a
 * listing changed behind the ledger's back fails with the problem named.
 */

const ADMIN_KEY = 'admin-key-of-the-doctor-test';
const world: World = {
  ...catalogWorld,
  users: [user(1), user(2)],
  items: [
    { item_id: 10, user_id: 1, item_proto_id: 101, ts_owned: 1000 },
    { item_id: 11, user_id: 1, item_proto_id: 101, ts_owned: 1001 },
  ],
};

let location: DatabaseLocation;
let server: TestServer;
let env: NodeJS.ProcessEnv;

before(async () => {
  location = await newDatabaseLocation();
  server = await startTestServer({ world, location, config: { adminKey: ADMIN_KEY } });
  env = processDatabaseEnv(location);
  const seller = { token: await tokenFor(server, 1) };
  const buyer = { token: await tokenFor(server, 2) };
  await callOk(server, 'admin.grantMoney', { user_id: 2, amount: 50, reason: 'doctor' }, { headers: { 'x-admin-key': ADMIN_KEY } });
  await callOk(server, 'market.sell', { thing_id: 10, price: 20 }, seller);
  await callOk(server, 'market.sell', { thing_id: 11, price: 9.99 }, seller);
  await callOk(server, 'market.buy', { thing_id: 10, price: 2000 }, buyer);
});
after(async () => {
  await server?.close();
  await location?.dispose();
});

describe('game-platform doctor', () => {
  test('passes on a clean market, fails naming a balance changed behind the ledger, passes again once it is put back', async () => {
    const clean = await runCli(['doctor'], env);
    assert.equal(clean.code, 0, clean.stderr);
    assert.match(clean.stdout, /the ledger and the market add up/);

    const k = server.db.kysely;
    await k.updateTable('balances').set({ balance: 3100 }).where('user_id', '=', 2).execute();
    const corrupted = await runCli(['doctor'], env);
    assert.equal(corrupted.code, 1);
    assert.equal(corrupted.stdout, '');
    assert.match(
      corrupted.stderr,
      /2 problems found:\n {2}user 2: balance 3100, entries sum to 3000\n {2}user 2: last entry says 3000, balance is 3100\n$/,
    );

    await k.updateTable('balances').set({ balance: 3000 }).where('user_id', '=', 2).execute();
    assert.equal((await runCli(['doctor'], env)).code, 0);
  });

  test('fails on a listed item that is not held, and on fees that do not match the sales', async () => {
    const k = server.db.kysely;
    await k.updateTable('items').set({ state: 'owned' }).where('item_id', '=', 11).execute();
    await k.updateTable('market_sales').set({ fee: 201 }).where('item_id', '=', 10).execute();
    const answer = await runCli(['doctor'], env);
    assert.equal(answer.code, 1);
    assert.match(answer.stderr, /fee entries sum to 200, sales' fees to 201/);
    assert.match(answer.stderr, /the fee account holds 200, sales' fees sum to 201/);
    assert.match(answer.stderr, /listing of item 11 \(seller 1\): the item is owned, not listed/);
    await k.updateTable('items').set({ state: 'listed' }).where('item_id', '=', 11).execute();
    await k.updateTable('market_sales').set({ fee: 200 }).where('item_id', '=', 10).execute();
    assert.equal((await runCli(['doctor'], env)).code, 0);
  });
});
