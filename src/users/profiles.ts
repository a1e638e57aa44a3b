import type { Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { Services } from '../services.js';
import { ApiError, Code } from '../api/errors.js';
import type { UsersTable } from '../db/tables.js';
import type { Flag } from '../db/flags.js';
import { friendshipLookup, friendshipValues } from '../friends/relations.js';
import { flatText } from '../infra/text.js';
import { storedRank, type Rank } from './rank.js';
import type { UserFull, UserInactive, UserShort } from './schemas.js';

export type UserForm = 'short' | 'full';
export type UserRow = Selectable<UsersTable>;
export type UserShortObject = Static<typeof UserShort>;
export type UserFullObject = Static<typeof UserFull>;
/** A profile as answers show it, in the short or full form. */
export type UserObject = UserShortObject | UserFullObject;
export type UserInactiveObject = Static<typeof UserInactive>;
export type InactiveReason = 'not_exists' | 'global_ban';

/**
 * What users.get shows in place of an account it cannot show. The avatar is empty, as for
 * any user without a picture, so clients draw their default one; the nick says why.
 */
export const INACTIVE_PLACEHOLDERS: Record<InactiveReason, { nick: string; avatar: string; avatar_key: string }> = {
  not_exists: { nick: 'Unknown user', avatar: '', avatar_key: '' },
  global_ban: { nick: 'Blocked account', avatar: '', avatar_key: '' },
};

const PROFILE_COLUMNS = [
  'user_id',
  'domain',
  'approved',
  'nick',
  'nicks_old',
  'gender',
  'avatar',
  'avatar_key',
  'profile_cover',
  'rank',
  'games',
  'games_wins',
  'xp',
  'xp_level',
  'vip',
  'moderator',
  'superadmin',
  'global_ban',
  'muted_until',
  'bot_owner_id',
  'always_online',
  'last_seen',
] as const;

export type ProfileRow = Pick<UserRow, (typeof PROFILE_COLUMNS)[number]>;

/**
 * A user's profile columns with what answers derive from them: the JSON columns parsed, and,
 * once asked for, the profile's JSON text per form. Cached profiles are shown again and
 * again, so answers copy ready-made text. One fixed shape for every profile, since answers
 * read many of them in a row. Never changed in place (a change to the user replaces it);
 * the parsed values are frozen, as every answer showing the profile shares them.
 *
 * Fields lie in memory in the order declared: what every answer reads comes first, so that
 * showing a profile touches as little memory as possible.
 */
export class Profile implements ProfileRow {
  readonly user_id: number;
  readonly global_ban: Flag;
  readonly always_online: Flag;
  readonly last_seen: number;
  readonly muted_until: number | null;
  /**
   * The JSON text of each form, online and not, without `muted`, `friendship` and the closing
   * brace, made when first shown: one flat string per answer part, as answers list many
   * profiles and read each one's text from wherever it lies in memory.
   */
  fullText: string | undefined = undefined;
  fullOnlineText: string | undefined = undefined;
  shortText: string | undefined = undefined;
  shortOnlineText: string | undefined = undefined;
  readonly domain: string | null;
  readonly approved: Flag;
  readonly nick: string;
  readonly nicks_old: string;
  readonly gender: Flag;
  readonly avatar: string;
  readonly avatar_key: string | null;
  readonly profile_cover: string | null;
  readonly rank: string | null;
  readonly games: number;
  readonly games_wins: number;
  readonly xp: number;
  readonly xp_level: number;
  readonly vip: Flag;
  readonly moderator: Flag;
  readonly superadmin: Flag;
  readonly bot_owner_id: number | null;
  /** `rank` as shown: one of its four forms, or undefined when none is set. */
  readonly rankShown: Readonly<Rank> | undefined;
  readonly nicksOldShown: readonly string[];

  constructor(row: ProfileRow) {
    this.user_id = row.user_id;
    this.domain = row.domain;
    this.approved = row.approved;
    this.nick = row.nick;
    this.nicks_old = row.nicks_old;
    this.gender = row.gender;
    this.avatar = row.avatar;
    this.avatar_key = row.avatar_key;
    this.profile_cover = row.profile_cover;
    this.rank = row.rank;
    this.games = row.games;
    this.games_wins = row.games_wins;
    this.xp = row.xp;
    this.xp_level = row.xp_level;
    this.vip = row.vip;
    this.moderator = row.moderator;
    this.superadmin = row.superadmin;
    this.global_ban = row.global_ban;
    this.muted_until = row.muted_until;
    this.bot_owner_id = row.bot_owner_id;
    this.always_online = row.always_online;
    this.last_seen = row.last_seen;
    const rank = storedRank(row.rank);
    this.rankShown = rank === undefined ? undefined : Object.freeze(rank);
    this.nicksOldShown = Object.freeze(JSON.parse(row.nicks_old) as string[]);
  }

  /** Whether the user may not write in the chat at `nowMs`. */
  mutedAt(nowMs: number): boolean {
    return this.muted_until !== null && this.muted_until * 1000 > nowMs;
  }
}

/** The profile of the user an id or domain names, or undefined when there is none. One query at most; a cached profile needs none. */
export async function findUser(services: Services, idOrDomain: number | string): Promise<Profile | undefined> {
  if (typeof idOrDomain === 'number') return (await loadProfilesByKey(services, [idOrDomain])).ofIds[0];
  return (await loadProfilesByKey(services, [], [idOrDomain])).byDomain.get(idOrDomain);
}

/**
 * The id of the user an id or domain names (the value of `parameter`); 101 when there is
 * none. With `active`, a globally blocked account counts as none (it takes no part in the
 * social graph).
 */
export async function requireUser(
  services: Services,
  idOrDomain: number | string,
  { parameter = 'user_id', active = false }: { parameter?: string; active?: boolean } = {},
): Promise<number> {
  const profile = await findUser(services, idOrDomain);
  if (profile === undefined || (active && profile.global_ban === 1))
    throw new ApiError(Code.USER_NOT_FOUND, `parameter ${parameter}: user ${idOrDomain} does not exist`);
  return profile.user_id;
}

/**
 * Profiles of the users named by id (`ofIds`: at the same index, undefined where no such
 * user) or by domain. One query at most; cached profiles need none.
 */
export async function loadProfilesByKey(
  services: Services,
  ids: readonly number[],
  domains: readonly string[] = [],
): Promise<{ ofIds: (Profile | undefined)[]; byDomain: Map<string, Profile> }> {
  const cache = services.users.profiles;
  const ofIds = new Array<Profile | undefined>(ids.length);
  const byDomain = new Map<string, Profile>();
  const missingIds: number[] = [];
  const missingDomains: string[] = [];
  if (cache) cache.getMany(ids, ofIds, missingIds);
  else missingIds.push(...ids);
  for (const domain of domains) {
    const profile = cache?.getByDomain(domain);
    if (profile) byDomain.set(domain, profile);
    else missingDomains.push(domain);
  }
  if (missingIds.length === 0 && missingDomains.length === 0) return { ofIds, byDomain };

  const fill = cache?.startFill();
  const rows = await services.db.kysely
    .selectFrom('users')
    .select(PROFILE_COLUMNS)
    .where((eb) =>
      eb.or([
        ...(missingIds.length > 0 ? [eb('user_id', 'in', [...new Set(missingIds)])] : []),
        ...(missingDomains.length > 0 ? [eb('domain', 'in', [...new Set(missingDomains)])] : []),
      ]),
    )
    .execute();
  const profiles = rows.map((row) => new Profile(row));
  if (cache && fill !== undefined) cache.storeProfiles(fill, profiles);
  const loaded = new Map<number, Profile>();
  for (const profile of profiles) {
    loaded.set(profile.user_id, profile);
    if (profile.domain !== null) byDomain.set(profile.domain, profile);
  }
  ids.forEach((id, i) => (ofIds[i] ??= loaded.get(id)));
  return { ofIds, byDomain };
}

export async function loadProfiles(services: Services, ids: number[]): Promise<Map<number, Profile>> {
  if (ids.length === 0) return new Map();
  const { ofIds } = await loadProfilesByKey(services, ids);
  const byId = new Map<number, Profile>();
  for (const profile of ofIds) if (profile !== undefined) byId.set(profile.user_id, profile);
  return byId;
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
export function profileObject(services: Services, profile: Profile, form: 'short'): UserShortObject;
export function profileObject(services: Services, profile: Profile, form: 'full'): UserFullObject;
export function profileObject(services: Services, profile: Profile, form: UserForm): UserObject;
export function profileObject(services: Services, profile: Profile, form: UserForm): UserObject {
  const user: UserShortObject = {
    user_id: profile.user_id,
    ...(profile.domain !== null ? { domain: profile.domain } : {}),
    ...(profile.approved === 1 ? { approved: 1 } : {}),
    nick: profile.nick,
    gender: profile.gender,
    avatar: profile.avatar,
    ...(profile.avatar_key ? { avatar_key: profile.avatar_key } : {}),
    ...(services.presence.isOnline(profile) ? { online: 1 } : {}),
    ...(profile.rankShown !== undefined ? { rank: profile.rankShown } : {}),
    ...(profile.vip === 1 ? { vip: 1 } : {}),
    ...(profile.bot_owner_id !== null ? { bot: 1, bot_owner: profile.bot_owner_id } : {}),
    ...(profile.moderator === 1 ? { moderator: 1 } : {}),
    ...(profile.superadmin === 1 ? { superadmin: 1 } : {}),
  };
  if (form === 'short') return user;
  return {
    ...user,
    nicks_old: [...profile.nicksOldShown],
    ...(profile.profile_cover ? { profile_cover: profile.profile_cover } : {}),
    games: profile.games,
    games_wins: profile.games_wins,
    xp: profile.xp,
    xp_level: profile.xp_level,
    ...(profile.mutedAt(services.clock.now()) ? { muted: 1 } : {}),
  };
}

const field = (name: string, value: unknown): string => `,${JSON.stringify(name)}:${JSON.stringify(value)}`;

/**
 * `profileObject(profile, form)` as JSON text, in its key order, up to `muted`: the head
 * (user_id..avatar_key), `online` when `online`, then the middle (rank..xp_level).
 */
function profileText(profile: Profile, form: UserForm, online: boolean): string {
  const cached =
    form === 'full' ? (online ? profile.fullOnlineText : profile.fullText) : online ? profile.shortOnlineText : profile.shortText;
  if (cached !== undefined) return cached;
  let text = `{"user_id":${JSON.stringify(profile.user_id)}`;
  if (profile.domain !== null) text += field('domain', profile.domain);
  if (profile.approved === 1) text += ',"approved":1';
  text += field('nick', profile.nick) + field('gender', profile.gender) + field('avatar', profile.avatar);
  if (profile.avatar_key) text += field('avatar_key', profile.avatar_key);
  if (online) text += ',"online":1';
  if (profile.rankShown !== undefined) text += field('rank', profile.rankShown);
  if (profile.vip === 1) text += ',"vip":1';
  if (profile.bot_owner_id !== null) text += ',"bot":1' + field('bot_owner', profile.bot_owner_id);
  if (profile.moderator === 1) text += ',"moderator":1';
  if (profile.superadmin === 1) text += ',"superadmin":1';
  if (form === 'full') {
    text += field('nicks_old', profile.nicksOldShown);
    if (profile.profile_cover) text += field('profile_cover', profile.profile_cover);
    text +=
      field('games', profile.games) +
      field('games_wins', profile.games_wins) +
      field('xp', profile.xp) +
      field('xp_level', profile.xp_level);
  }
  text = flatText(text);
  if (form === 'full') {
    if (online) profile.fullOnlineText = text;
    else profile.fullText = text;
  } else if (online) profile.shortOnlineText = text;
  else profile.shortText = text;
  return text;
}

/**
 * The JSON text of `profileObject(services, profile, form)` with `friendship` (when given)
 * added last, as JSON.stringify would write it. `nowMs`: the clock, read once per answer.
 */
export function profileJson(services: Services, profile: Profile, form: UserForm, friendship: number | undefined, nowMs: number): string {
  let json = profileText(profile, form, services.presence.isOnline(profile, nowMs));
  if (form === 'full' && profile.mutedAt(nowMs)) json += ',"muted":1';
  if (friendship !== undefined) json += `,"friendship":${friendship}`;
  return json + '}';
}

/**
 * The JSON texts of profiles as `viewerId` sees them: in the full form, everyone but the
 * viewer carries `friendship`. Elements given as text (users.get's placeholders) are kept
 * as they are.
 */
export async function profileTexts(
  services: Services,
  shown: readonly (Profile | string)[],
  form: UserForm,
  viewerId: number | undefined,
): Promise<string[]> {
  let friendshipOf: ((id: number) => number) | undefined;
  if (form === 'full' && viewerId !== undefined) {
    const others: number[] = [];
    for (const u of shown) if (typeof u !== 'string' && u.user_id !== viewerId) others.push(u.user_id);
    if (others.length > 0) friendshipOf = await friendshipLookup(services, viewerId, others);
  }
  const nowMs = services.clock.now();
  return shown.map((u) =>
    typeof u === 'string' ? u : profileJson(services, u, form, u.user_id === viewerId ? undefined : friendshipOf?.(u.user_id), nowMs),
  );
}

/** The placeholder users.get answers for an unknown or globally blocked account. */
export function inactiveObject(reason: InactiveReason, key: { user_id?: number; domain?: string | null }): UserInactiveObject {
  return {
    ...(key.user_id !== undefined ? { user_id: key.user_id } : {}),
    ...(key.domain !== undefined && key.domain !== null ? { domain: key.domain } : {}),
    ...INACTIVE_PLACEHOLDERS[reason],
    inactive: reason,
  };
}

/** Adds `friendship` (the viewer's relation) to full-form profiles of everyone but the viewer. */
export async function addFriendship(services: Services, users: UserFullObject[], viewerId: number): Promise<void> {
  const others = users.filter((u) => u.user_id !== viewerId).map((u) => u.user_id);
  if (others.length === 0) return;
  const relations = await friendshipValues(services, viewerId, others);
  for (const user of users) {
    const relation = relations.get(user.user_id);
    if (relation !== undefined && user.user_id !== viewerId) user.friendship = relation;
  }
}

/**
 * Profiles by id in the given form, keyed by id; ids with no user are absent. Globally
 * blocked accounts come back as ordinary profiles: callers that must hide them check
 * `isGloballyBanned` or use users.get's placeholders. In the full form, a signed-in viewer
 * sees `friendship` on everyone but themselves.
 */
export async function loadUsers(services: Services, ids: number[], options: { form: 'short' }): Promise<Map<number, UserShortObject>>;
export async function loadUsers(
  services: Services,
  ids: number[],
  options: { form: 'full'; viewerId?: number },
): Promise<Map<number, UserFullObject>>;
export async function loadUsers(
  services: Services,
  ids: number[],
  options: { form: UserForm; viewerId?: number },
): Promise<Map<number, UserObject>>;
export async function loadUsers(
  services: Services,
  ids: number[],
  options: { form: UserForm; viewerId?: number },
): Promise<Map<number, UserObject>> {
  const profiles = await loadProfiles(services, ids);
  if (options.form === 'short') {
    const short = new Map<number, UserShortObject>();
    for (const [id, profile] of profiles) short.set(id, profileObject(services, profile, 'short'));
    return short;
  }
  const full = new Map<number, UserFullObject>();
  for (const [id, profile] of profiles) full.set(id, profileObject(services, profile, 'full'));
  if (options.viewerId !== undefined) await addFriendship(services, [...full.values()], options.viewerId);
  return full;
}

/** Whether a profile row is of a globally blocked account. */
export function isGloballyBanned(row: Pick<ProfileRow, 'global_ban'>): boolean {
  return row.global_ban === 1;
}
