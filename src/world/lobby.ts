/**
 * The lobby's sections of a world file, on their own: waiting rooms (`rooms`) and finished
 * games (`games`), their checks (inside the file, then against the stored world in a merge),
 * their import and their export.
 */
import { sql } from 'kysely';
import type { DialectName, Executor } from '../db/connection.js';
import { classicBoard, finishedGameProblem, type GameOptions } from '../game/index.js';
import type { World } from './schema.js';
import type { WorldGame, WorldRoom } from './schema-lobby.js';

const bit = (v: boolean | 0 | 1 | undefined) => (v === true || v === 1 ? 1 : 0);
const CLASSIC_CONFIG = JSON.stringify(classicBoard);
/** Rooms waiting for players: the only ones a file carries (a started room is its live game's). */
const WAITING = sql.lit(0);
const OVER = sql.lit<'over'>('over');

type UserReference = (id: number, where: string) => unknown;

/** Every user a file's rooms seat: a merge locks them with the other users it changes. */
export function lobbyUsers(world: World): number[] {
  return (world.rooms ?? []).flatMap((room) => room.players);
}

/** The lobby's sections on their own: ids, who they name, settings, each user in one room, games that end as they say. */
export function lobbyProblems(world: World, user: UserReference): string[] {
  return [...roomProblems(world.rooms ?? [], user), ...gameProblems(world.games ?? [], user)];
}

function roomProblems(rooms: WorldRoom[], user: UserReference): string[] {
  const problems: string[] = [];
  const ids = new Set<number>();
  const seated = new Map<number, number>();
  rooms.forEach((room, i) => {
    const where = `rooms[${i}]`;
    if (ids.has(room.room_id)) problems.push(`${where}.room_id: duplicate ${room.room_id}`);
    ids.add(room.room_id);
    const players = new Set(room.players);
    room.players.forEach((id, j) => {
      user(id, `${where}.players[${j}]`);
      const other = seated.get(id);
      if (other !== undefined && other !== i) problems.push(`${where}.players[${j}]: user ${id} is already in rooms[${other}]`);
      else if (other === i) problems.push(`${where}.players[${j}]: user ${id} is seated twice`);
      seated.set(id, i);
    });
    if (!players.has(room.admin_id)) problems.push(`${where}.admin_id: user ${room.admin_id} is not one of its players`);
    if (room.players.length > room.maxplayers)
      problems.push(`${where}.players: ${room.players.length} players, more than its maxplayers ${room.maxplayers}`);
    else if (room.players.length === room.maxplayers && bit(room.autostart) === 1)
      problems.push(`${where}: a full room set to autostart would have started (its game is not carried)`);
    if ((room.game_submode ?? 0) !== 0)
      problems.push(`${where}.game_submode: only the classic game (0) is played, not ${room.game_submode}`);
    if ((room.game_timers ?? 1) !== 1) problems.push(`${where}.game_timers: only 1 (timers on) is played, not ${room.game_timers}`);
    if ((room.br_corner ?? 0) !== 0) problems.push(`${where}.br_corner: only 0 (the classic corners) is played, not ${room.br_corner}`);
    const invited = new Set<number>();
    (room.invites ?? []).forEach((invite, j) => {
      const at = `${where}.invites[${j}]`;
      user(invite.user_id, `${at}.user_id`);
      if (invited.has(invite.user_id)) problems.push(`${at}.user_id: user ${invite.user_id} is invited twice`);
      invited.add(invite.user_id);
      if (players.has(invite.user_id)) problems.push(`${at}.user_id: user ${invite.user_id} is a player of the room`);
      if (invite.inviter_id !== undefined && !players.has(invite.inviter_id))
        problems.push(`${at}.inviter_id: user ${invite.inviter_id} is not one of its players`);
    });
    const banned = new Set<number>();
    (room.bans ?? []).forEach((id, j) => {
      const at = `${where}.bans[${j}]`;
      user(id, at);
      if (banned.has(id)) problems.push(`${at}: user ${id} is listed twice`);
      banned.add(id);
      if (players.has(id)) problems.push(`${at}: user ${id} is a player of the room (a kicked user is not)`);
      if (invited.has(id)) problems.push(`${at}: user ${id} is also invited (an invitation lifts the kick)`);
    });
  });
  return problems;
}

function gameProblems(games: WorldGame[], user: UserReference): string[] {
  const problems: string[] = [];
  const ids = new Set<number>();
  games.forEach((game, i) => {
    const where = `games[${i}]`;
    if (ids.has(game.game_id)) problems.push(`${where}.game_id: duplicate ${game.game_id}`);
    ids.add(game.game_id);
    let seatsFine = true;
    game.players.forEach((player, j) => {
      const at = `${where}.players[${j}]`;
      if (player.user_id > 0 && player.computer === undefined) user(player.user_id, `${at}.user_id`);
      else if (player.user_id >= 0 || player.computer !== 1) {
        problems.push(`${at}: computer players, and only they, have negative user ids and computer 1`);
        seatsFine = false;
      }
    });
    const seats = new Set(game.players.map((p) => p.user_id));
    if (seats.size !== game.players.length) {
      problems.push(`${where}.players: a player is seated twice`);
      seatsFine = false;
    }
    if (!seats.has(game.winner_user_id)) {
      problems.push(`${where}.winner_user_id: ${game.winner_user_id} is not one of its players`);
      seatsFine = false;
    }
    if (game.ts_end_ms < game.ts_start_ms) problems.push(`${where}.ts_end_ms: before ts_start_ms`);
    game.actions.forEach((a, j) => {
      if (a.user_id !== undefined && !seats.has(a.user_id))
        problems.push(`${where}.actions[${j}].user_id: ${a.user_id} is not one of its players`);
      else if (a.ts_ms < game.ts_start_ms || a.ts_ms > game.ts_end_ms)
        problems.push(`${where}.actions[${j}].ts_ms: outside the game's times`);
    });
    if (!seatsFine || problems.some((p) => p.startsWith(`${where}.`))) return;
    const problem = finishedGameProblem({
      config: (game.config ?? classicBoard) as typeof classicBoard,
      players: game.players.map(playerSetup),
      options: (game.options ?? {}) as Partial<GameOptions>,
      seed: game.seed,
      tsStart: game.ts_start_ms,
      winner: game.winner_user_id,
      actions: game.actions.map((a) => ({ user_id: a.user_id ?? null, action: a.action as never, ts: a.ts_ms })),
    });
    if (problem !== undefined) problems.push(`${where}${problem}`);
  });
  return problems;
}

/** A seat as the game server stores it: the engine's defaults where the file gives none. */
function playerSetup(player: WorldGame['players'][number]) {
  return {
    user_id: player.user_id,
    ...(player.team !== undefined ? { team: player.team } : {}),
    is_vip: player.is_vip ?? 0,
    is_loan_available: player.is_loan_available ?? 0,
    equipment: (player.equipment ?? { cards: [] }) as never,
    ...(player.computer ? { computer: 1 as const } : {}),
  };
}

const chunks = <T>(list: T[], size = 500): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
};

/**
 * In a merge, what the stored lobby says against the file: a room the file replaces must not
 * have started, a player must not sit in a stored room the file leaves or play a live game, and
 * a game the file replaces must not be live.
 */
export async function storedLobbyProblems(trx: Executor, dialect: DialectName, world: World): Promise<string[]> {
  const problems: string[] = [];
  const rooms = world.rooms ?? [];
  const fileRoomIds = new Set(rooms.map((r) => r.room_id));
  for (const ids of chunks([...fileRoomIds].sort((a, b) => a - b))) {
    let query = trx.selectFrom('rooms').select(['room_id', 'status', 'game_id']).where('room_id', 'in', ids).orderBy('room_id');
    if (dialect === 'postgres') query = query.forUpdate();
    for (const row of await query.execute()) {
      if (Number(row.status) === 0) continue;
      const index = rooms.findIndex((r) => r.room_id === Number(row.room_id));
      problems.push(`rooms[${index}].room_id: room ${row.room_id} has started (game ${row.game_id}); a started room is not replaced`);
    }
  }
  const seatOf = new Map<number, string>();
  rooms.forEach((room, i) => room.players.forEach((id, j) => seatOf.set(id, `rooms[${i}].players[${j}]`)));
  for (const ids of chunks([...seatOf.keys()])) {
    const members = await trx.selectFrom('room_members').select(['user_id', 'room_id']).where('user_id', 'in', ids).execute();
    for (const m of members)
      if (!fileRoomIds.has(Number(m.room_id))) problems.push(`${seatOf.get(Number(m.user_id))}: user ${m.user_id} is in room ${m.room_id}`);
    const live = await trx.selectFrom('game_live_players').select(['user_id', 'game_id']).where('user_id', 'in', ids).execute();
    for (const l of live) problems.push(`${seatOf.get(Number(l.user_id))}: user ${l.user_id} plays the live game ${l.game_id}`);
  }
  const games = world.games ?? [];
  for (const ids of chunks(games.map((g) => g.game_id))) {
    const rows = await trx.selectFrom('games').select('game_id').where('game_id', 'in', ids).where('status', '!=', OVER).execute();
    for (const row of rows) {
      const index = games.findIndex((g) => g.game_id === Number(row.game_id));
      problems.push(`games[${index}].game_id: game ${row.game_id} is live; only finished games are replaced`);
    }
  }
  return problems.sort();
}

/** Everything of the lobby and the games (live ones too) a replace empties. */
const LOBBY_TABLES = [
  'room_members',
  'room_invites',
  'room_bans',
  'rooms',
  'game_live_players',
  'game_actions',
  'game_players',
  'games',
] as const;

/**
 * Writes the file's rooms and games: each replaces as a whole the stored one with its id (its
 * players, invitations and kicks; its seats and actions). A replace first empties the lobby and
 * every game, live ones included.
 */
export async function importLobby(trx: Executor, dialect: DialectName, world: World, now: number, replace: boolean): Promise<void> {
  if (replace) for (const table of LOBBY_TABLES) await trx.deleteFrom(table).execute();
  await importRooms(trx, world.rooms ?? [], now, replace);
  await importGames(trx, world.games ?? []);
  if (dialect === 'postgres')
    for (const [table, column] of [
      ['rooms', 'room_id'],
      ['games', 'game_id'],
    ] as const) {
      const sequence = sql`pg_get_serial_sequence(${table}, ${column})`;
      const pastStored = sql`(select coalesce(max(${sql.ref(column)}), 0) + 1 from ${sql.table(table)})`;
      await sql`select setval(${sequence}, greatest(${pastStored}, nextval(${sequence})), false)`.execute(trx);
    }
}

async function importRooms(trx: Executor, rooms: WorldRoom[], now: number, replace: boolean): Promise<void> {
  if (rooms.length === 0) return;
  const storedVersion = new Map<number, number>();
  for (const ids of chunks(rooms.map((r) => r.room_id))) {
    if (!replace)
      for (const row of await trx.selectFrom('rooms').select(['room_id', 'v']).where('room_id', 'in', ids).execute())
        storedVersion.set(Number(row.room_id), Number(row.v));
    for (const table of ['room_members', 'room_invites', 'room_bans', 'rooms'] as const)
      await trx.deleteFrom(table).where('room_id', 'in', ids).execute();
  }
  for (const batch of chunks(rooms, 200)) {
    await trx
      .insertInto('rooms')
      .values(
        batch.map((room) => {
          const stored = storedVersion.get(room.room_id);
          return {
            room_id: room.room_id,
            status: 0,
            admin_id: room.admin_id,
            game_submode: 0,
            maxplayers: room.maxplayers,
            private: bit(room.private),
            autostart: bit(room.autostart),
            game_timers: 1,
            br_corner: 0,
            // Clients ignore a patch whose version is not above what they hold: a replaced room goes past it.
            v: Math.max(room.v ?? 1, stored === undefined ? 1 : stored + 1),
            ts_created: room.ts_created ?? now,
            players: null,
            game_id: null,
            gs_id: null,
          };
        }),
      )
      .execute();
  }
  const members = rooms.flatMap((room) =>
    room.players.map((user_id, seat) => ({ user_id, room_id: room.room_id, seat, ts_joined: room.ts_created ?? now })),
  );
  for (const batch of chunks(members)) await trx.insertInto('room_members').values(batch).execute();
  const invites = rooms.flatMap((room) =>
    (room.invites ?? []).map((invite) => ({
      room_id: room.room_id,
      user_id: invite.user_id,
      inviter_id: invite.inviter_id ?? room.admin_id,
      ts: invite.ts ?? now,
    })),
  );
  for (const batch of chunks(invites)) await trx.insertInto('room_invites').values(batch).execute();
  const bans = rooms.flatMap((room) => (room.bans ?? []).map((user_id) => ({ room_id: room.room_id, user_id })));
  for (const batch of chunks(bans)) await trx.insertInto('room_bans').values(batch).execute();
}

async function importGames(trx: Executor, games: WorldGame[]): Promise<void> {
  if (games.length === 0) return;
  for (const ids of chunks(games.map((g) => g.game_id)))
    for (const table of ['game_actions', 'game_players', 'games'] as const)
      await trx.deleteFrom(table).where('game_id', 'in', ids).execute();
  for (const game of games) {
    await trx
      .insertInto('games')
      .values({
        game_id: game.game_id,
        status: 'over',
        config: game.config === undefined ? CLASSIC_CONFIG : JSON.stringify(game.config),
        players: JSON.stringify(game.players.map(playerSetup)),
        options: JSON.stringify(game.options ?? {}),
        seed: game.seed,
        ts_start: game.ts_start_ms,
        ts_end: game.ts_end_ms,
        winner_user_id: game.winner_user_id,
        deadline: null,
        actions: game.actions.length,
      })
      .execute();
    const humans = [...new Set(game.players.filter((p) => p.user_id > 0).map((p) => p.user_id))];
    if (humans.length > 0)
      await trx
        .insertInto('game_players')
        .values(humans.map((user_id) => ({ game_id: game.game_id, user_id })))
        .execute();
    for (const batch of chunks(game.actions.map((a, seq) => ({ a, seq }))))
      await trx
        .insertInto('game_actions')
        .values(
          batch.map(({ a, seq }) => ({
            game_id: game.game_id,
            seq,
            user_id: a.user_id ?? null,
            action: JSON.stringify(a.action),
            ts: a.ts_ms,
          })),
        )
        .execute();
  }
}

/** The waiting rooms and the finished games, as a file carries them. */
export async function exportLobby(db: Executor): Promise<Pick<World, 'rooms' | 'games'>> {
  const [rooms, members, invites, bans, games, actions] = await Promise.all([
    db.selectFrom('rooms').selectAll().where('status', '=', WAITING).orderBy('room_id').execute(),
    db.selectFrom('room_members').selectAll().orderBy('room_id').orderBy('seat').execute(),
    db.selectFrom('room_invites').selectAll().orderBy('room_id').orderBy('ts').orderBy('user_id').execute(),
    db.selectFrom('room_bans').selectAll().orderBy('room_id').orderBy('user_id').execute(),
    db.selectFrom('games').selectAll().where('status', '=', OVER).orderBy('game_id').execute(),
    db
      .selectFrom('game_actions')
      .innerJoin('games', 'games.game_id', 'game_actions.game_id')
      .select(['game_actions.game_id', 'game_actions.user_id', 'game_actions.action', 'game_actions.ts'])
      .where('games.status', '=', OVER)
      .orderBy('game_actions.game_id')
      .orderBy('game_actions.seq')
      .execute(),
  ]);
  const by = <T extends { room_id?: unknown; game_id?: unknown }>(rows: T[], key: 'room_id' | 'game_id') => {
    const map = new Map<number, T[]>();
    for (const row of rows) {
      const id = Number(row[key]);
      const list = map.get(id);
      if (list) list.push(row);
      else map.set(id, [row]);
    }
    return map;
  };
  const membersOf = by(members, 'room_id');
  const invitesOf = by(invites, 'room_id');
  const bansOf = by(bans, 'room_id');
  const actionsOf = by(actions, 'game_id');
  return {
    rooms: rooms.map((r) => {
      const roomInvites = invitesOf.get(Number(r.room_id)) ?? [];
      const roomBans = bansOf.get(Number(r.room_id)) ?? [];
      return {
        room_id: Number(r.room_id),
        admin_id: Number(r.admin_id),
        players: (membersOf.get(Number(r.room_id)) ?? []).map((m) => Number(m.user_id)),
        maxplayers: Number(r.maxplayers),
        private: Number(r.private) === 1 ? 1 : 0,
        autostart: Number(r.autostart) === 1 ? 1 : 0,
        ...(roomInvites.length > 0
          ? { invites: roomInvites.map((i) => ({ user_id: Number(i.user_id), inviter_id: Number(i.inviter_id), ts: Number(i.ts) })) }
          : {}),
        ...(roomBans.length > 0 ? { bans: roomBans.map((b) => Number(b.user_id)) } : {}),
        ts_created: Number(r.ts_created),
        v: Number(r.v),
      };
    }),
    games: games.map((g) => {
      const options = JSON.parse(g.options) as Record<string, unknown>;
      return {
        game_id: Number(g.game_id),
        players: JSON.parse(g.players) as WorldGame['players'],
        seed: g.seed,
        ...(g.config === CLASSIC_CONFIG ? {} : { config: JSON.parse(g.config) as Record<string, unknown> }),
        ...(Object.keys(options).length > 0 ? { options } : {}),
        ts_start_ms: Number(g.ts_start),
        ts_end_ms: Number(g.ts_end),
        winner_user_id: Number(g.winner_user_id),
        actions: (actionsOf.get(Number(g.game_id)) ?? []).map((a) => ({
          ...(a.user_id === null ? {} : { user_id: Number(a.user_id) }),
          action: JSON.parse(a.action) as WorldGame['actions'][number]['action'],
          ts_ms: Number(a.ts),
        })),
      };
    }),
  };
}
