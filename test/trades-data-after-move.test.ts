import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DB_KIND, startTestServer, type TestServer } from './helpers.js';
import { dataAfterMove } from '../src/trades/settle.js';

/*
 * An item's per-item data after it changes hands is written by the server on SQLite and by
 * PostgreSQL's trade_accept (trade_data_after_move, migration 013) on PostgreSQL: both must say
 * the same, whatever the item carried before.
 */

const postgresOnly = {
  skip: DB_KIND !== 'postgres' && 'PostgreSQL only: SQLite writes it with the server, the other side of this comparison',
};

let server: TestServer;
before(async () => {
  if (DB_KIND === 'postgres') server = await startTestServer({});
});
after(async () => {
  await server?.close();
});

const cases: [string, string | null][] = [
  ['nothing', null],
  ['an empty object', '{}'],
  ['other members, kept', '{"souvenir":"Cup","uses":{"n":3},"ts_can_sell":-1}'],
  ['earlier owners, extended', '{"previous_owners_user_ids":[4,5],"souvenir":"Cup"}'],
  ['earlier owners that are not a list, replaced', '{"previous_owners_user_ids":"4,5"}'],
  ['a gift before, cleared or replaced', '{"gift":{"from_user_id":4,"to_user_id":5,"ts":90},"previous_owners_user_ids":[4]}'],
  ['a list, not an object', '[1,2,3]'],
  ['a number', '42'],
  ['unreadable text', '{"previous_owners_user_ids":[4'],
  ['text that is not JSON at all', 'souvenir'],
];

test(
  'PostgreSQL writes the data of a moved item as the server does, whatever it carried before, in a trade and as a gift',
  postgresOnly,
  async () => {
    for (const [name, data] of cases)
      for (const gift of [false, true]) {
        const { rows } = await sql<{ data: string }>`select trade_data_after_move(${data}, ${7}, ${8}, ${gift}, ${1000}) as data`.execute(
          server.db.kysely,
        );
        const written = rows[0]!.data;
        assert.deepEqual(
          JSON.parse(written),
          JSON.parse(dataAfterMove(data, 7, 8, gift, 1000)),
          `${name}${gift ? ', as a gift' : ''}: ${written}`,
        );
      }
  },
);
