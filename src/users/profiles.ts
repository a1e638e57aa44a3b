import type { Selectable } from 'kysely';
import type { Services } from '../services.js';
import type { UsersTable } from '../db/tables.js';
import { friendshipValues } from '../friends/relations.js';
import { profileCacheOf } from './profile-cache.js';

export type UserForm = 'short' | 'full';
export type UserRow = Selectable<UsersTable>;
export type UserObject = Record<string, unknown> & { user_id?: number };
export type InactiveReason = 'not_exists' | 'global_ban';

/**
 * What users.get shows in place of an account it cannot show. The avatar is empty, as for
 * any user without a picture, so clients draw their default one; the nick says why.
 */
export const INACTIVE_PLACEHOLDERS: Record<InactiveReason, { nick: string; avatar: string }> = {
  not_exists: { nick: 'Unknown user', avatar: '' },
  global_ban: { nick: 'Blocked account', avatar: '' },
};

const PROFILE_COLUMNS = [
  'user_id', 'domain', 'approved', 'nick', 'nicks_old', 'gender', 'avatar', 'avatar_key', 'profile_cover', 'rank', 'games',
  'games_wins', 'xp', 'xp_level', 'vip', 'moderator', 'superadmin', 'global_ban', 'muted_until', 'bot_owner_id', 'always_online',
  'last_seen',
] as const;

export type ProfileRow = Pick<UserRow, (typeof PROFILE_COLUMNS)[number]>;

/** The numeric id for an id-or-domain parameter, or null when no such user exists. */
export async function findUserId(services: Services, idOrDomain: number | string): Promise<number | null> {
  const cached = profileCacheOf(services);
  const hit = typeof idOrDomain === 'number' ? cached?.get(idOrDomain) : cached?.getByDomain(idOrDomain);
  if (hit !== undefined) return (hit as ProfileRow).user_id;
  const query = services.db.kysely.selectFrom('users').select('user_id');
  const row = await (typeof idOrDomain === 'number' ? query.where('user_id', '=', idOrDomain) : query.where('domain', '=', idOrDomain)).executeTakeFirst();
  return row?.user_id ?? null;
}

/** Profile rows of the users named by id or by domain (one query at most; cached rows need none). */
export async function loadProfileRowsByKey(
  services: Services,
  ids: number[],
  domains: string[] = [],
): Promise<{ byId: Map<number, ProfileRow>; byDomain: Map<string, ProfileRow> }> {
  const cache = profileCacheOf(services);
  const byId = new Map<number, ProfileRow>();
  const byDomain = new Map<string, ProfileRow>();
  const missingIds: number[] = [];
  const missingDomains: string[] = [];
  for (const id of new Set(ids)) {
    const row = cache?.get(id) as ProfileRow | undefined;
    if (row) byId.set(id, row);
    else missingIds.push(id);
  }
  for (const domain of new Set(domains)) {
    const row = cache?.getByDomain(domain) as ProfileRow | undefined;
    if (row) byDomain.set(domain, row);
    else missingDomains.push(domain);
  }
  if (missingIds.length === 0 && missingDomains.length === 0) return { byId, byDomain };

  const fill = cache?.startFill();
  const rows = await services.db.kysely
    .selectFrom('users')
    .select(PROFILE_COLUMNS)
    .where((eb) =>
      eb.or([
        ...(missingIds.length > 0 ? [eb('user_id', 'in', missingIds)] : []),
        ...(missingDomains.length > 0 ? [eb('domain', 'in', missingDomains)] : []),
      ]),
    )
    .execute();
  if (cache && fill !== undefined) cache.storeRows(fill, rows);
  for (const row of rows) {
    byId.set(row.user_id, row);
    if (row.domain !== null) byDomain.set(row.domain, row);
  }
  return { byId, byDomain };
}

export async function loadProfileRows(services: Services, ids: number[]): Promise<Map<number, ProfileRow>> {
  if (ids.length === 0) return new Map();
  return (await loadProfileRowsByKey(services, ids)).byId;
}

function rankObject(rank: string): { hidden: 0 | 1 } {
  const parsed = JSON.parse(rank) as { hidden?: unknown } | null;
  return { hidden: parsed?.hidden === 1 || parsed?.hidden === true ? 1 : 0 };
}

interface ParsedColumns {
  rank: Readonly<{ hidden: 0 | 1 }> | undefined;
  nicksOld: readonly unknown[];
  /** The row's profile as JSON text around its changing fields, per form, once asked for. */
  json: { short?: ProfileJsonParts; full?: ProfileJsonParts };
}

/** JSON text of a profile: `head` + `,"online":1`? + `middle` + `,"muted":1`? + `,"friendship":n`? + `}`. */
interface ProfileJsonParts {
  head: string;
  middle: string;
}

const PARSED = Symbol('parsed columns');

/**
 * The JSON columns of a row, parsed once per row object and kept on it (a hidden property,
 * which copies of the row leave behind): cached rows are shown again and again. Rows are
 * never changed in place (a change replaces the cached row), and the parsed values are
 * frozen, as every answer that shows the row shares them.
 */
function parsedColumns(row: ProfileRow): ParsedColumns {
  let parsed = (row as ProfileRow & { [PARSED]?: ParsedColumns })[PARSED];
  if (parsed === undefined) {
    parsed = {
      rank: row.rank === null ? undefined : Object.freeze(rankObject(row.rank)),
      nicksOld: Object.freeze(JSON.parse(row.nicks_old) as unknown[]),
      json: {},
    };
    Object.defineProperty(row, PARSED, { value: parsed, enumerable: false });
  }
  return parsed;
}

/**
 * A profile in the short or full form; only `user_id` is always present.
 *
 * Short: user_id, domain?, approved?, nick, gender, avatar, avatar_key?, online?, rank?, vip?,
 * bot?, bot_owner?, moderator?, superadmin?. Full adds nicks_old (always, may be empty),
 * profile_cover?, games, games_wins, xp, xp_level and muted?. Flags documented as "present
 * as 1" are omitted when 0, and the optional avatar_key and profile_cover when empty. The
 * game counters are numbers that clients add up and compare, so the full form always
 * carries them, 0 included. `muted` is 1 while the user may not write in the chat
 * (`muted_until` in the future); anyone may see it, as anyone sees the user's silence in
 * the chat. `friendship` is added by `loadUsers`.
 */
export function profileObject(services: Services, row: ProfileRow, form: UserForm): UserObject {
  const user: UserObject = { user_id: row.user_id };
  if (row.domain !== null) user.domain = row.domain;
  if (row.approved === 1) user.approved = 1;
  user.nick = row.nick;
  user.gender = row.gender;
  user.avatar = row.avatar;
  if (row.avatar_key) user.avatar_key = row.avatar_key;
  if (services.presence.isOnline(row)) user.online = 1;
  const parsed = parsedColumns(row);
  if (parsed.rank !== undefined) user.rank = parsed.rank;
  if (row.vip === 1) user.vip = 1;
  if (row.bot_owner_id !== null) {
    user.bot = 1;
    user.bot_owner = row.bot_owner_id;
  }
  if (row.moderator === 1) user.moderator = 1;
  if (row.superadmin === 1) user.superadmin = 1;
  if (form === 'full') {
    user.nicks_old = parsed.nicksOld;
    if (row.profile_cover) user.profile_cover = row.profile_cover;
    user.games = row.games;
    user.games_wins = row.games_wins;
    user.xp = row.xp;
    user.xp_level = row.xp_level;
    if (row.muted_until !== null && row.muted_until * 1000 > services.clock.now()) user.muted = 1;
  }
  return user;
}

const field = (name: string, value: unknown): string => `,${JSON.stringify(name)}:${JSON.stringify(value)}`;

/** The fixed parts of `profileObject(row, form)` as JSON text, in its key order. */
function profileJsonParts(row: ProfileRow, form: UserForm): ProfileJsonParts {
  const parsed = parsedColumns(row);
  let cached = form === 'full' ? parsed.json.full : parsed.json.short;
  if (cached !== undefined) return cached;
  let head = `{"user_id":${JSON.stringify(row.user_id)}`;
  if (row.domain !== null) head += field('domain', row.domain);
  if (row.approved === 1) head += ',"approved":1';
  head += field('nick', row.nick) + field('gender', row.gender) + field('avatar', row.avatar);
  if (row.avatar_key) head += field('avatar_key', row.avatar_key);
  let middle = '';
  if (parsed.rank !== undefined) middle += field('rank', parsed.rank);
  if (row.vip === 1) middle += ',"vip":1';
  if (row.bot_owner_id !== null) middle += ',"bot":1' + field('bot_owner', row.bot_owner_id);
  if (row.moderator === 1) middle += ',"moderator":1';
  if (row.superadmin === 1) middle += ',"superadmin":1';
  if (form === 'full') {
    middle += field('nicks_old', parsed.nicksOld);
    if (row.profile_cover) middle += field('profile_cover', row.profile_cover);
    middle += field('games', row.games) + field('games_wins', row.games_wins) + field('xp', row.xp) + field('xp_level', row.xp_level);
  }
  cached = { head, middle };
  if (form === 'full') parsed.json.full = cached;
  else parsed.json.short = cached;
  return cached;
}

/**
 * The JSON text of `profileObject(services, row, form)` with `friendship` (when given) added
 * last, as JSON.stringify would write it; the fixed parts are built once per cached row.
 */
export function profileJson(services: Services, row: ProfileRow, form: UserForm, friendship?: number): string {
  const parts = profileJsonParts(row, form);
  let json = parts.head;
  if (services.presence.isOnline(row)) json += ',"online":1';
  json += parts.middle;
  if (form === 'full' && row.muted_until !== null && row.muted_until * 1000 > services.clock.now()) json += ',"muted":1';
  if (friendship !== undefined) json += `,"friendship":${friendship}`;
  return json + '}';
}

/** The placeholder users.get answers for an unknown or globally blocked account. */
export function inactiveObject(reason: InactiveReason, key: { user_id?: number; domain?: string | null }): UserObject {
  const user: UserObject = {};
  if (key.user_id !== undefined) user.user_id = key.user_id;
  if (key.domain !== undefined && key.domain !== null) user.domain = key.domain;
  return { ...user, ...INACTIVE_PLACEHOLDERS[reason], inactive: reason };
}

/** Adds `friendship` (the viewer's relation) to full-form profiles of everyone but the viewer. */
export async function addFriendship(services: Services, users: UserObject[], viewerId: number): Promise<void> {
  const others = users.filter((u) => u.user_id !== undefined && u.user_id !== viewerId).map((u) => u.user_id!);
  if (others.length === 0) return;
  const relations = await friendshipValues(services, viewerId, others);
  for (const user of users) {
    const relation = user.user_id === undefined ? undefined : relations.get(user.user_id);
    if (relation !== undefined && user.user_id !== viewerId) user.friendship = relation;
  }
}

/**
 * Profiles by id in the given form, keyed by id; ids with no user are absent. Globally
 * blocked accounts come back as ordinary profiles: callers that must hide them check
 * `isGloballyBanned` or use users.get's placeholders. In the full form, a signed-in viewer
 * sees `friendship` on everyone but themselves.
 */
export async function loadUsers(
  services: Services,
  ids: number[],
  options: { form: UserForm; viewerId?: number },
): Promise<Map<number, UserObject>> {
  const rows = await loadProfileRows(services, ids);
  const out = new Map<number, UserObject>();
  for (const [id, row] of rows) out.set(id, profileObject(services, row, options.form));
  if (options.form === 'full' && options.viewerId !== undefined) await addFriendship(services, [...out.values()], options.viewerId);
  return out;
}

/** Whether a profile row is of a globally blocked account. */
export function isGloballyBanned(row: Pick<ProfileRow, 'global_ban'>): boolean {
  return row.global_ban === 1;
}
