/**
 * The lobby's sections of a world file, on their own: waiting rooms (`rooms`) and finished
 * games (`games`), and their checks inside the file (those against the stored world, the import
 * and the export are the data-access module's: queries.ts).
 */
import { classicBoard, finishedGameProblem, type GameOptions } from '../game/index.js';
import type { World } from './schema.js';
import type { WorldGame, WorldRoom } from './schema-lobby.js';

export const bit = (v: boolean | 0 | 1 | undefined) => (v === true || v === 1 ? 1 : 0);

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
export function playerSetup(player: WorldGame['players'][number]) {
  return {
    user_id: player.user_id,
    ...(player.team !== undefined ? { team: player.team } : {}),
    is_vip: player.is_vip ?? 0,
    is_loan_available: player.is_loan_available ?? 0,
    equipment: (player.equipment ?? { cards: [] }) as never,
    ...(player.computer ? { computer: 1 as const } : {}),
  };
}
