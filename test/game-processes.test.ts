import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DB_KIND, REDIS_URL, newDatabaseLocation, processDatabaseEnv } from './helpers.js';
import { api, call, serve, stopAll, type ServerProcess } from './process-support.js';
import { GameSocket, moveFor } from './game-socket-support.js';
import { missing } from './components.js';
import { CLUSTERED, startProcesses } from './race-support.js';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import { openDatabase } from '../src/db/connection.js';
import { playDueGames } from '../src/game/timers.js';
import type { World } from '../src/world/schema.js';

/*
 * The game server over several `serve` processes on one PostgreSQL and Redis: a player on one
 * process and spectators on either see the same packets in the same order; actions sent at
 * once through both processes play one after the other; a process killed mid-game loses
 * nothing it acknowledged, and the game goes on from its stored actions on the other process
 * and on the restarted one, to its end. Then, in-process servers (two on PostgreSQL, one on
 * SQLite): each process's kept game states against the database, and the turn timers racing
 * the players' actions under the game's row lock.
 */

const PASSWORD = 'game-processes-password';
const USERS = [1, 2, 3, 4, 5];

const turnOf = (packets: any[]): { user_id: number | null; list: string[] } => packets.at(-1).status.turn.action;

/** Two `serve` processes on a new database and Redis, spectators' delay 0; `restart` starts another on the same database. */
async function cluster(body: (servers: ServerProcess[], restart: () => Promise<ServerProcess>) => Promise<void>): Promise<void> {
  const location = await newDatabaseLocation();
  const dir = mkdtempSync(join(tmpdir(), 'gp-game-processes-'));
  const db = await openDatabase(location.url, { schema: location.schema, secretKey: location.secretKey });
  const servers: ServerProcess[] = [];
  try {
    const world = { users: USERS.map((id) => ({ user_id: id, email: `u${id}@example.com`, password: PASSWORD, nick: `User ${id}` })) };
    writeFileSync(join(dir, 'world.json'), JSON.stringify(world));
    const env = { ...processDatabaseEnv(location), REDIS_URL, REDIS_PREFIX: location.redisPrefix, GAME_SPECTATOR_DELAY: '0' };
    servers.push(await serve({ ...env, WORLD: join(dir, 'world.json') }));
    servers.push(await serve(env));
    await body(servers, async () => {
      const server = await serve(env);
      servers.push(server);
      return server;
    });
  } finally {
    await stopAll(servers.filter((s) => s.child.exitCode === null && s.child.signalCode === null));
    await db.close();
    rmSync(dir, { recursive: true, force: true });
    await location.dispose();
  }
}

const signIn = async (server: ServerProcess, id: number): Promise<string> =>
  (await api(server, 'auth.signin', { email: `u${id}@example.com`, password: PASSWORD })).access_token;

/** A game's packets as a player reads them (games.getReplay). */
const replay = async (server: ServerProcess, token: string, gameId: number) =>
  (await api(server, 'games.getReplay', { access_token: token, game_id: gameId })) as { status: string; packets: any[] };

const wsBase = (server: ServerProcess) => server.url;

describe(
  'the game server over two serve processes',
  { skip: (DB_KIND !== 'postgres' && 'several processes share a database on PostgreSQL only') || missing.redis, timeout: 240_000 },
  () => {
    test('a player on one process and spectators on both see the same packets in order; actions through both processes play one at a time', () =>
      cluster(async ([a, b]) => {
        const [one, two, three] = [await signIn(a!, 1), await signIn(b!, 2), await signIn(a!, 3)];
        const roomId = (await api(a!, 'rooms.create', { access_token: one, maxplayers: 2 })).room_id;
        await api(b!, 'rooms.join', { access_token: two, room_id: roomId });
        await api(b!, 'rooms.startGame', { access_token: one, room_id: roomId });
        const room = (await api(a!, 'rooms.get', { access_token: one, room_id: roomId })).rooms[0];
        const gameId = Number(room.gs_game_id);
        assert.ok(gameId > 0, JSON.stringify(room));

        const resolve = async (server: ServerProcess, token: string) =>
          api(server, 'games.resolve', { access_token: token, gs_game_id: gameId }) as Promise<{ gs_token: string; player: number }>;
        const [gs1, gs2, gs3a, gs3b] = [await resolve(a!, one), await resolve(b!, two), await resolve(a!, three), await resolve(b!, three)];
        assert.deepEqual([gs1.player, gs2.player, gs3a.player, gs3b.player], [1, 1, 0, 0]);
        const player1 = await GameSocket.open(wsBase(a!), gs1.gs_token);
        const player2 = await GameSocket.open(wsBase(b!), gs2.gs_token);
        const spectatorA = await GameSocket.open(wsBase(a!), gs3a.gs_token);
        const spectatorB = await GameSocket.open(wsBase(b!), gs3b.gs_token);
        const sockets = [player1, player2, spectatorA, spectatorB];
        try {
          const socketOf = new Map([
            [1, { socket: player1, token: one, home: a!, other: b! }],
            [2, { socket: player2, token: two, home: b!, other: a! }],
          ]);
          let accepted = 0;
          for (let step = 0; step < 30; step++) {
            const { packets } = await replay(a!, one, gameId);
            const turn = turnOf(packets);
            if (turn.user_id === null) break;
            const move = moveFor(turn.list);
            if (move === 'leave') break;
            const actor = socketOf.get(turn.user_id)!;
            const idle = socketOf.get(turn.user_id === 1 ? 2 : 1)!;
            // The same move at once: over the player's socket, over HTTP on the other process, and by the other
            // player (refused, or played if the first move passed them the turn).
            const answers = await Promise.all([
              actor.socket.act({ action: move }).then((f) => f.code as number),
              call(actor.other, 'game.action', { access_token: actor.token, game_id: gameId, action: move }).then((r) => r.code as number),
              idle.socket.act({ action: move }).then((f) => f.code as number),
            ]);
            for (const code of answers) assert.ok(code === 0 || code === 1902, `step ${step}: ${answers.join(', ')}`);
            const ok = answers.filter((code) => code === 0).length;
            assert.ok(ok >= 1, `step ${step}: one of the two sends was played (${answers.join(', ')})`);
            accepted += ok;
          }
          assert.ok(accepted >= 30, `${accepted} actions accepted`);
          await api(a!, 'game.action', { access_token: two, game_id: gameId, action: 'leave' });
          accepted += 1;

          const final = await replay(b!, one, gameId);
          assert.equal(final.status, 'over');
          assert.equal(final.packets.length, 1 + accepted, 'one packet for each accepted action, nothing played twice');
          const last = final.packets.length - 1;
          for (const socket of sockets) await socket.untilSeq(last);
          const expected = final.packets.map((packet, seq) => [seq, packet]);
          for (const [i, socket] of sockets.entries()) assert.deepEqual(socket.packets(), expected, `socket ${i}`);
          const ids = final.packets.flatMap((p) => p.events.map((e: any) => Number(e.id)));
          assert.deepEqual(
            ids,
            ids.map((_, i) => i + 1),
            'events numbered once each, in order',
          );
          const profiles = await api(b!, 'users.get', { user_ids: '1,2' });
          assert.deepEqual(
            profiles.map((u: any) => [u.games, u.games_wins]),
            [
              [1, 1],
              [1, 0],
            ],
          );
        } finally {
          for (const socket of sockets) socket.close();
        }
      }));

    test('a process killed mid-game: what it acknowledged stays, the game goes on on the other process and on the restarted one, to its end', () =>
      cluster(async ([a, b], restart) => {
        const [four, five] = [await signIn(a!, 4), await signIn(b!, 5)];
        const created = await api(a!, 'games.createVsComputer', { access_token: four, computers: 2, action_seconds: 3600 });
        const gameId: number = created.game_id;
        const player = await GameSocket.open(
          wsBase(a!),
          (await api(a!, 'games.resolve', { access_token: four, gs_game_id: gameId })).gs_token,
        );
        const spectator = await GameSocket.open(
          wsBase(b!),
          (await api(b!, 'games.resolve', { access_token: five, gs_game_id: gameId })).gs_token,
        );
        const sockets = [player, spectator];
        try {
          // Acknowledged: the first packet, then every packet each answered action gave, in order.
          const acknowledged: any[] = [...created.packets];
          const playOn = async (server: ServerProcess) => {
            const body = await call(server, 'game.action', {
              access_token: four,
              game_id: gameId,
              action: moveFor(turnOf(acknowledged).list),
            });
            assert.equal(body.code, 0, JSON.stringify(body));
            acknowledged.push(...body.data.packets);
          };
          for (let n = 0; n < 8; n++) await playOn(a!);
          // One more sent, and the process killed while it may still be playing it.
          const inFlight = call(a!, 'game.action', {
            access_token: four,
            game_id: gameId,
            action: moveFor(turnOf(acknowledged).list),
          }).then(
            (body) => ({ body }),
            (error: unknown) => ({ error }),
          );
          a!.child.kill('SIGKILL');
          await a!.exited;
          const lost = await inFlight;

          const afterKill = await replay(b!, four, gameId);
          assert.equal(afterKill.status, 'live');
          assert.deepEqual(afterKill.packets.slice(0, acknowledged.length), acknowledged, 'every acknowledged packet is stored, in order');
          // The last one, unanswered, may or may not have committed; answered, it is stored.
          if ('body' in lost && lost.body.code === 0)
            assert.deepEqual(afterKill.packets, [...acknowledged, ...lost.body.data.packets], 'the last one was answered: it is stored');
          acknowledged.splice(0, acknowledged.length, ...afterKill.packets);
          const receivedBeforeKill = player.packets();
          assert.deepEqual(
            receivedBeforeKill,
            acknowledged.slice(0, receivedBeforeKill.length).map((packet, seq) => [seq, packet]),
            'the player saw only stored packets, in order',
          );

          // The player goes on through the surviving process, reconnecting after the last packet seen.
          const again = await GameSocket.open(
            wsBase(b!),
            (await api(b!, 'games.resolve', { access_token: four, gs_game_id: gameId })).gs_token,
            player.lastSeq(),
          );
          sockets.push(again);
          for (let n = 0; n < 4; n++) {
            const answer = await again.act({ action: moveFor(turnOf(acknowledged).list) });
            assert.equal(answer.code, 0, JSON.stringify(answer));
            acknowledged.splice(0, acknowledged.length, ...(await replay(b!, four, gameId)).packets);
          }
          // And on a process started again on the same database, to the end.
          const c = await restart();
          for (let n = 0; n < 4; n++) await playOn(c);
          const left = await api(c, 'game.action', { access_token: four, game_id: gameId, action: 'leave' });
          acknowledged.push(...left.packets);
          assert.equal(acknowledged.at(-1).events.at(-1).type, 'game-over', 'the computers played it to its end');

          const final = await replay(c, four, gameId);
          assert.equal(final.status, 'over');
          assert.deepEqual(final.packets, acknowledged);
          const last = final.packets.length - 1;
          await spectator.untilSeq(last);
          await again.untilSeq(last);
          assert.deepEqual(
            spectator.packets(),
            final.packets.map((packet, seq) => [seq, packet]),
            'the spectator on the surviving process saw every packet once, in order',
          );
          assert.deepEqual(
            [...receivedBeforeKill, ...again.packets()],
            final.packets.map((packet, seq) => [seq, packet]),
            'the player saw every packet once across both connections',
          );
          const [profile] = await api(c, 'users.get', { user_ids: '4' });
          assert.deepEqual([profile.games, profile.games_wins], [1, 0]);
        } finally {
          for (const socket of sockets) socket.close();
        }
      }));
  },
);

const world: World = { ...catalogWorld, users: [1, 2, 3, 4, 5, 6, 7, 8].map((id) => user(id)) };

describe('game states and timers in each process', { skip: CLUSTERED && missing.redis }, () => {
  test('each process plays from the state it kept while the game is at its version, rebuilds it when another moved it on, and agrees with the replay', async () => {
    const processes = await startProcesses({ world, redis: false });
    try {
      const servers = processes.servers;
      const token = await tokenFor(servers[0]!, 1);
      const post = async (i: number, method: string, params: Record<string, unknown>) =>
        (await fetch(`${processes.urls[i]}/api/${method}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify(params),
        }).then((r) => r.json())) as any;
      const counts = () => servers.map((s) => s.services.game.states.counts());
      const before = counts();
      const created = await post(0, 'games.createVsComputer', { computers: 3, action_seconds: 3600 });
      const gameId = created.data.game_id;
      const played: any[] = [...created.data.packets];
      const move = async (i: number, action?: string) => {
        const body = await post(i, 'game.action', { game_id: gameId, action: action ?? moveFor(turnOf(played).list) });
        if (body.code === 0) played.push(...body.data.packets);
        return body;
      };
      for (let n = 0; n < 6; n++) assert.equal((await move(0)).code, 0);
      const onFirst = counts()[0]!;
      assert.deepEqual([onFirst.hits - before[0]!.hits, onFirst.rebuilds - before[0]!.rebuilds], [6, 0], 'six calls, no rebuild');
      assert.equal(onFirst.size, before[0]!.size + 1);

      // A refused action keeps nothing of what it tried; the next call plays on the stored game.
      const refused = await move(0, turnOf(played).list.includes('roll-dices') ? 'rent.pay' : 'roll-dices');
      assert.equal(refused.code, 1902, JSON.stringify(refused));
      assert.equal((await move(0)).code, 0);

      const other = processes.urls[1] === processes.urls[0] ? 0 : 1;
      for (let n = 0; n < 6; n++) assert.equal((await move(n % 2 === 0 ? other : 0)).code, 0);
      const after = counts();
      if (CLUSTERED) {
        // Turns alternate between the processes: each finds the game moved on by the other.
        assert.equal(after[0]!.rebuilds - onFirst.rebuilds, 1 + 3, 'after the refusal, then each time the other had played');
        assert.equal(after[1]!.rebuilds - before[1]!.rebuilds, 3);
      } else assert.equal(after[0]!.rebuilds - onFirst.rebuilds, 1, 'only after the refusal');

      const left = await move(other, 'leave');
      assert.equal(left.code, 0);
      const replay = await post(0, 'games.getReplay', { game_id: gameId });
      assert.equal(replay.data.status, 'over');
      assert.deepEqual(replay.data.packets, played, 'the packets played from kept states are the ones rebuilt from the database');
      // The process that did not play the end hears of it from the other's packets.
      const sizes = () => counts().map((c) => c.size);
      for (let tries = 0; tries < 200 && sizes().join() !== before.map((c) => c.size).join(); tries++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(
        sizes(),
        before.map((c) => c.size),
        'a game over is not kept, by either process',
      );
    } finally {
      await processes.close();
    }
  });

  test("turn timers of both processes racing the players' actions: every due timeout is played once, no call fails", async () => {
    const processes = await startProcesses({ world, redis: false });
    try {
      const servers = processes.servers;
      const clock = servers[0]!.clock;
      const players = [1, 2, 3, 4, 5, 6, 7, 8];
      const tokens = new Map<number, string>();
      for (const id of players) tokens.set(id, await tokenFor(servers[0]!, id));
      const post = async (i: number, id: number, method: string, params: Record<string, unknown>) =>
        (await fetch(`${processes.urls[i % 2]}/api/${method}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.get(id)}` },
          body: JSON.stringify(params),
        }).then((r) => r.json())) as any;
      const games = new Map<number, number>();
      for (const id of players)
        games.set(id, (await post(id, id, 'games.createVsComputer', { computers: 1, action_seconds: 5 })).data.game_id);

      const answers: number[] = [];
      const ticks: { played: number; failed: number }[] = [];
      for (let round = 0; round < 6; round++) {
        clock.advance(5);
        const work: Promise<unknown>[] = [];
        for (const server of servers) for (let n = 0; n < 2; n++) work.push(playDueGames(server.services).then((t) => ticks.push(t)));
        for (const id of players)
          for (let n = 0; n < 2; n++)
            work.push(
              post(id + n, id, 'game.action', { game_id: games.get(id), action: 'roll-dices' }).then((body) => answers.push(body.code)),
            );
        await Promise.all(work);
      }
      assert.deepEqual(
        ticks.filter((t) => t.failed > 0),
        [],
        'no timer failed',
      );
      assert.deepEqual(
        answers.filter((code) => code !== 0 && code !== 1902),
        [],
        'every action was played or refused by the rules',
      );
      assert.equal(ticks.length, servers.length * 2 * 6);
      assert.ok(answers.includes(0), 'some actions were played');
      for (const id of players) {
        const replay = (await post(0, id, 'games.getReplay', { game_id: games.get(id) })).data;
        const ids = replay.packets.flatMap((p: any) => p.events.map((e: any) => Number(e.id)));
        assert.deepEqual(
          ids,
          ids.map((_: number, i: number) => i + 1),
          `game of ${id}: events numbered once each, in order`,
        );
        for (const [i, packet] of replay.packets.entries())
          if (i > 0) assert.ok(packet.time.ts_now >= replay.packets[i - 1].time.ts_now, `game of ${id}: time goes on`);
      }
    } finally {
      await processes.close();
    }
  });
});
