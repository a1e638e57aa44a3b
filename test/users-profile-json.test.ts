import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { loadProfiles, profileJson, profileObject } from '../src/users/profiles.js';
import type { World } from '../src/world/schema.js';

const FAR_FUTURE = Date.UTC(2100, 0, 1) / 1000;

// Every optional part of a profile, alone and together, and text that JSON must escape.
const world: World = {
  users: [
    { user_id: 1, nick: 'Plain' },
    {
      user_id: 2,
      nick: 'Every "flag" \\ é 😀',
      domain: 'every',
      nicks_old: ['Old "one"', 'two'],
      gender: 1,
      avatar: 'a.png',
      avatar_key: 'k1',
      profile_cover: 'cover.png',
      approved: 1,
      vip: 1,
      moderator: 1,
      superadmin: 1,
      rank: { hidden: 1 },
      games: 10,
      games_wins: 3,
      xp: 1234,
      xp_level: 7,
      muted_until: FAR_FUTURE,
      online: 1,
    },
    { user_id: 3, nick: 'Bot', bot_owner: 1, rank: { id: 3, pts: 0 }, muted_until: 1 },
    { user_id: 5, nick: 'Qualifying', rank: { qual: 2 } },
    { user_id: 6, nick: 'Expired', rank: { expired: 1 } },
    { user_id: 4, nick: 'Banned', global_ban: 1, avatar_key: '', profile_cover: '' },
  ],
};

let server: TestServer;
before(async () => {
  server = await startTestServer({ world });
});
after(async () => {
  await server.close();
});

test('profile JSON text is exactly JSON.stringify of the profile object, friendship last, in both forms', async () => {
  for (let round = 0; round < 2; round++) {
    // The second round serves the rows from the profile cache where there is one.
    const rows = await loadProfiles(server.services, [1, 2, 3, 4, 5, 6]);
    assert.equal(rows.size, 6);
    for (const row of rows.values())
      for (const form of ['short', 'full'] as const)
        for (const friendship of [undefined, 0, 1, 6]) {
          const shown = profileObject(server.services, row, form);
          const object = friendship === undefined ? shown : { ...shown, friendship };
          assert.equal(profileJson(server.services, row, form, friendship, server.services.clock.now()), JSON.stringify(object));
        }
  }
});
