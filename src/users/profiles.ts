import type { Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { Services } from '../services.js';
import { ApiError, Code } from '../api/errors.js';
import type { UsersTable } from '../db/tables.js';
import type { Flag } from '../db/flags.js';
import { flatText } from '../infra/text.js';
import { storedRank } from './rank.js';
import type { Presence } from './presence.js';
import { selectProfileRows, type ProfileRow } from './queries.js';
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

export type { ProfileRow };

/** What a profile is shown with besides its row: who is online, and the clock, read once per answer. */
interface Showing {
  presence: Presence;
  nowMs: number;
}

/**
 * One key of the profile answers, in their key order: shown in the short form and up
 * (`short`) or only in the full form. A stored field's value comes from the row, once per
 * read of the row; a live field's from the moment it is shown. Undefined leaves the key out.
 */
type ProfileField =
  | { key: string; form: UserForm; stored: (row: ProfileRow) => unknown }
  | { key: string; form: UserForm; live: (profile: Profile, showing: Showing) => unknown };

/** Flags documented as "present as 1" are left out when 0. */
const presentAsOne = (flag: Flag): 1 | undefined => (flag === 1 ? 1 : undefined);

/**
 * The fields of a profile, which both its JSON text and its object form are made from
 * (`friendship`, the viewer's relation, is added after them). `user_id` is always present.
 * The optional avatar_key and profile_cover are left out when empty. The game counters are
 * numbers that clients add up and compare, so the full form always carries them, 0
 * included. `muted` is 1 while the user may not write in the chat; anyone may see it, as
 * anyone sees the user's silence in the chat.
 */
const PROFILE_FIELDS: readonly ProfileField[] = [
  { key: 'user_id', form: 'short', stored: (row) => row.user_id },
  { key: 'domain', form: 'short', stored: (row) => row.domain ?? undefined },
  { key: 'approved', form: 'short', stored: (row) => presentAsOne(row.approved) },
  { key: 'nick', form: 'short', stored: (row) => row.nick },
  { key: 'gender', form: 'short', stored: (row) => row.gender },
  { key: 'avatar', form: 'short', stored: (row) => row.avatar },
  { key: 'avatar_key', form: 'short', stored: (row) => row.avatar_key || undefined },
  { key: 'online', form: 'short', live: (profile, { presence, nowMs }) => (presence.isOnline(profile, nowMs) ? 1 : undefined) },
  { key: 'rank', form: 'short', stored: (row) => storedRank(row.rank) },
  { key: 'vip', form: 'short', stored: (row) => presentAsOne(row.vip) },
  { key: 'bot', form: 'short', stored: (row) => (row.bot_owner_id !== null ? 1 : undefined) },
  { key: 'bot_owner', form: 'short', stored: (row) => row.bot_owner_id ?? undefined },
  { key: 'moderator', form: 'short', stored: (row) => presentAsOne(row.moderator) },
  { key: 'superadmin', form: 'short', stored: (row) => presentAsOne(row.superadmin) },
  { key: 'nicks_old', form: 'full', stored: (row) => JSON.parse(row.nicks_old) as string[] },
  { key: 'profile_cover', form: 'full', stored: (row) => row.profile_cover || undefined },
  { key: 'games', form: 'full', stored: (row) => row.games },
  { key: 'games_wins', form: 'full', stored: (row) => row.games_wins },
  { key: 'xp', form: 'full', stored: (row) => row.xp },
  { key: 'xp_level', form: 'full', stored: (row) => row.xp_level },
  { key: 'muted', form: 'full', live: (profile, { nowMs }) => (profile.mutedAt(nowMs) ? 1 : undefined) },
];

/**
 * The fields in runs: consecutive stored fields of one form make one run, whose JSON text a
 * profile keeps as one part of its text; each live field stands alone. `{` opens the first run.
 */
type TextPart =
  | { form: UserForm; stored: { prefix: string; value: (row: ProfileRow) => unknown }[] }
  | { form: UserForm; prefix: string; live: (profile: Profile, showing: Showing) => unknown };

const TEXT_PARTS: readonly TextPart[] = (() => {
  const parts: TextPart[] = [];
  PROFILE_FIELDS.forEach((field, index) => {
    const prefix = `${index === 0 ? '{' : ','}${JSON.stringify(field.key)}:`;
    if ('live' in field) {
      parts.push({ form: field.form, prefix, live: field.live });
      return;
    }
    const last = parts.at(-1);
    if (last !== undefined && 'stored' in last && last.form === field.form) last.stored.push({ prefix, value: field.stored });
    else parts.push({ form: field.form, stored: [{ prefix, value: field.stored }] });
  });
  return parts;
})();

const inForm = (part: TextPart, form: UserForm): boolean => form === 'full' || part.form === 'short';

/**
 * The parts of one form's text in order: stored runs next to each other (`firstRun` to
 * `lastRun`, indexes among the stored runs of `TEXT_PARTS`) as one, each live field alone.
 */
type FormPart = { firstRun: number; lastRun: number } | { prefix: string; live: (profile: Profile, showing: Showing) => unknown };

function formParts(form: UserForm): readonly FormPart[] {
  const parts: FormPart[] = [];
  let run = 0;
  for (const part of TEXT_PARTS) {
    if (!('stored' in part)) {
      if (inForm(part, form)) parts.push({ prefix: part.prefix, live: part.live });
      continue;
    }
    const index = run++;
    if (!inForm(part, form)) continue;
    const last = parts.at(-1);
    if (last !== undefined && 'lastRun' in last && last.lastRun === index - 1) last.lastRun = index;
    else parts.push({ firstRun: index, lastRun: index });
  }
  return parts;
}

const FORM_PARTS: Readonly<Record<UserForm, readonly FormPart[]>> = { short: formParts('short'), full: formParts('full') };

/**
 * A user's profile as kept in memory and shown: the JSON text of its stored fields, made
 * once per read of the row, and the few columns that decide the rest (live fields, users.get's
 * placeholders, lookups by domain). Cached profiles are shown again and again, so answers copy
 * parts of ready-made text; and one flat string per profile keeps a platform's worth of them
 * in little memory. Never changed (a change to the user replaces it).
 */
export class Profile {
  readonly user_id: number;
  readonly global_ban: Flag;
  readonly always_online: Flag;
  readonly last_seen: number;
  readonly muted_until: number | null;
  readonly domain: string | null;
  /** The stored runs' JSON text, one after the other (`TEXT_PARTS`). */
  readonly text: string;
  /** Where each stored run's text ends in `text`, in order. */
  readonly runEnds: readonly number[];

  constructor(row: ProfileRow) {
    this.user_id = row.user_id;
    this.global_ban = row.global_ban;
    this.always_online = row.always_online;
    this.last_seen = row.last_seen;
    this.muted_until = row.muted_until;
    this.domain = row.domain;
    let text = '';
    const runEnds: number[] = [];
    for (const part of TEXT_PARTS) {
      if (!('stored' in part)) continue;
      for (const { prefix, value } of part.stored) {
        const shown = value(row);
        if (shown !== undefined) text += prefix + JSON.stringify(shown);
      }
      runEnds.push(text.length);
    }
    this.text = flatText(text);
    this.runEnds = runEnds;
  }

  /** Whether the user may not write in the chat at `nowMs`. */
  mutedAt(nowMs: number): boolean {
    return this.muted_until !== null && this.muted_until * 1000 > nowMs;
  }
}

/**
 * The JSON text of a profile in a form, without the closing brace. The stored text is copied
 * in as few pieces as the live fields that show allow: most profiles in the full form are
 * their stored text as it is.
 */
function openProfileText(profile: Profile, form: UserForm, showing: Showing): string {
  const { text, runEnds } = profile;
  let json = '';
  // The stored text not yet copied: from `from` to `to` (from < 0: none).
  let from = -1;
  let to = 0;
  const pending = (): string => (from === 0 && to === text.length ? text : text.slice(from, to));
  for (const part of FORM_PARTS[form]) {
    if ('firstRun' in part) {
      const start = part.firstRun === 0 ? 0 : runEnds[part.firstRun - 1]!;
      if (from >= 0 && start !== to) json += pending();
      if (from < 0 || start !== to) from = start;
      to = runEnds[part.lastRun]!;
      continue;
    }
    const value = part.live(profile, showing);
    if (value === undefined) continue;
    if (from >= 0) json += pending();
    from = -1;
    json += part.prefix + JSON.stringify(value);
  }
  if (from >= 0) json += pending();
  return json;
}

/** How a profile's text ends: `}`, or `friendship` (each of its values) and `}`. */
const CLOSE = '}';
const FRIENDSHIP_CLOSE: readonly string[] = Array.from({ length: 7 }, (_, value) => `,"friendship":${value}}`);

function closedProfileText(open: string, friendship: number | undefined): string {
  if (friendship === undefined) return open + CLOSE;
  return open + (FRIENDSHIP_CLOSE[friendship] ?? `,"friendship":${friendship}}`);
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
  const rows = await selectProfileRows(services.db, [...new Set(missingIds)], [...new Set(missingDomains)]);
  const profiles = rows.map((row) => new Profile(row));
  if (cache && fill !== undefined) cache.storeProfiles(fill, profiles);
  const loaded = new Map<number, Profile>();
  for (const profile of profiles) {
    loaded.set(profile.user_id, profile);
    if (profile.domain !== null) byDomain.set(profile.domain, profile);
  }
  for (let i = 0; i < ids.length; i++) ofIds[i] ??= loaded.get(ids[i]!);
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
 * A profile in the short or full form (`PROFILE_FIELDS`); only `user_id` is always present.
 * Read back from the profile's JSON text, so the object and the text never differ.
 * `friendship` is added by `loadUsers`.
 */
export function profileObject(services: Services, profile: Profile, form: 'short'): UserShortObject;
export function profileObject(services: Services, profile: Profile, form: 'full'): UserFullObject;
export function profileObject(services: Services, profile: Profile, form: UserForm): UserObject;
export function profileObject(services: Services, profile: Profile, form: UserForm): UserObject {
  return JSON.parse(profileJson(services, profile, form, undefined, services.clock.now())) as UserObject;
}

/**
 * The JSON text of `profileObject(services, profile, form)` with `friendship` (when given)
 * added last, as JSON.stringify would write it. `nowMs`: the clock, read once per answer.
 */
export function profileJson(services: Services, profile: Profile, form: UserForm, friendship: number | undefined, nowMs: number): string {
  return closedProfileText(openProfileText(profile, form, { presence: services.presence, nowMs }), friendship);
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
    if (others.length > 0) friendshipOf = await services.hooks.users.friendshipLookup(services, viewerId, others);
  }
  const showing = { presence: services.presence, nowMs: services.clock.now() };
  return shown.map((u) =>
    typeof u === 'string'
      ? u
      : closedProfileText(openProfileText(u, form, showing), u.user_id === viewerId ? undefined : friendshipOf?.(u.user_id)),
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
  const relations = await services.hooks.users.friendshipValues(services, viewerId, others);
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

/**
 * A profile as lists of other users show it: the profile, or for a globally blocked account
 * users.get's placeholder (as JSON text, which profileTexts keeps as it is).
 */
export function shownProfile(profile: Profile): Profile | string {
  return isGloballyBanned(profile)
    ? JSON.stringify(inactiveObject('global_ban', { user_id: profile.user_id, domain: profile.domain }))
    : profile;
}

/** Whether a profile row is of a globally blocked account. */
export function isGloballyBanned(row: Pick<ProfileRow, 'global_ban'>): boolean {
  return row.global_ban === 1;
}
