import { Secret, TOTP } from 'otpauth';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { flag } from '../db/flags.js';
import { endingOpenTrades } from '../trades/index.js';
import { badParam } from '../api/errors.js';
import { nowSeconds } from '../services.js';
import { revokeAllSessions } from '../auth/index.js';
import { accountObject, createAccount, requireAccount, setAccountState, updateAccount, type ProfileChanges } from './accounts.js';
import {
  emailLookupKey,
  MAX_LIST_COUNT,
  nickKey,
  nickOrDomainStarts,
  type Rank,
  RANK_KINDS,
  type RankKind,
  requireUser,
} from '../users/index.js';
import { searchAccounts, type AccountQuery } from './queries.js';
import { AccountResult, AdminAccount, TotpResult, UserIdResult } from './schemas.js';
import { Type } from '@sinclair/typebox';
import { Strict, Uint } from '../api/schema-types.js';

const TOTP_ISSUER = 'game-platform';

const profileParams = {
  domain: P.optional(P.string({ maxLength: 100, description: 'short name usable in place of the id; an empty value clears it' })),
  gender: P.optional(P.uint({ maximum: 1, description: 'as users.get shows it: 0 or 1, the values clients know' })),
  avatar: P.optional(P.string({ maxLength: 2000, description: 'image URL' })),
  avatar_key: P.optional(P.string({ maxLength: 200, description: 'an empty value clears it' })),
  profile_cover: P.optional(P.string({ maxLength: 2000, description: 'image URL; an empty value clears it' })),
  approved: P.optional(P.bit({ description: 'verified account mark' })),
  vip: P.optional(P.bit({ description: 'VIP mark' })),
  moderator: P.optional(P.bit({ description: 'moderator mark' })),
  superadmin: P.optional(P.bit({ description: 'superadmin mark' })),
  rank: P.optional(
    P.enum(RANK_KINDS, {
      description:
        'the rank users.get shows: none (no rank), hidden ({hidden: 1}), qual ({qual: rank_qual}), expired ({expired: 1}), visible ({id: rank_id, pts: rank_pts})',
    }),
  ),
  rank_id: P.optional(P.uint({ description: 'rank = visible: the rank id' })),
  rank_pts: P.optional(P.uint({ description: 'rank = visible: the rank points' })),
  rank_qual: P.optional(P.uint({ description: 'rank = qual: qualifying games still to play' })),
  games: P.optional(P.uint({ description: 'games played' })),
  games_wins: P.optional(P.uint({ description: 'games won' })),
  xp: P.optional(P.uint({ description: 'experience points' })),
  xp_level: P.optional(P.uint({ description: 'experience level' })),
};

const userParam = P.idOrDomain({ description: 'id or domain of the user' });
const nick = (description: string) => P.string({ minLength: 1, maxLength: 100, description });

interface RankParams {
  rank?: RankKind;
  rank_id?: number;
  rank_pts?: number;
  rank_qual?: number;
}

/** The rank the rank parameters set: undefined leaves it, null clears it. */
function rankOf({ rank, rank_id, rank_pts, rank_qual }: RankParams): Rank | null | undefined {
  const needs = (name: string, value: number | undefined): number => {
    if (value === undefined) throw badParam(name, `is required with rank=${rank}`);
    return value;
  };
  const unused = (name: string, value: number | undefined, kinds: string): void => {
    if (value !== undefined) throw badParam(name, `applies only with rank=${kinds}`);
  };
  if (rank !== 'visible') {
    unused('rank_id', rank_id, 'visible');
    unused('rank_pts', rank_pts, 'visible');
  }
  if (rank !== 'qual') unused('rank_qual', rank_qual, 'qual');
  switch (rank) {
    case undefined:
      return undefined;
    case 'none':
      return null;
    case 'hidden':
      return { hidden: 1 };
    case 'expired':
      return { expired: 1 };
    case 'qual':
      return { qual: needs('rank_qual', rank_qual) };
    case 'visible':
      return { id: needs('rank_id', rank_id), pts: needs('rank_pts', rank_pts) };
  }
}

/** The profile changes the parameters ask for; `gender` is held to 0 or 1 by its schema. */
function profileOf(params: Omit<ProfileChanges, 'rank' | 'gender'> & { gender?: number } & RankParams): ProfileChanges {
  const { domain, gender, avatar, avatar_key, profile_cover, approved, vip, moderator, superadmin, games, games_wins, xp, xp_level } =
    params;
  return {
    domain,
    gender: gender === undefined ? undefined : flag(gender),
    avatar,
    avatar_key,
    profile_cover,
    approved,
    vip,
    moderator,
    superadmin,
    rank: rankOf(params),
    games,
    games_wins,
    xp,
    xp_level,
  };
}

/** The latest end of a mute, 9999-12-31T23:59:59Z: a later end means nothing more, and world files could not hold it. */
const LATEST_MUTE_END = 253_402_300_799;

/** Characters an operator's search may hold: an e-mail address at its longest. */
export const ACCOUNT_QUERY_MAX = 254;
/** Characters a nick or domain start needs, as users.search asks. */
const PREFIX_MIN = 2;

/**
 * What an operator's query compares: digits are an id (and the start of a nick or domain), a
 * text with `@` an e-mail address (exactly, as sign-in looks it up), anything else of at least
 * two characters the start of a nick or domain, in any case.
 */
function accountQuery(db: Parameters<typeof nickOrDomainStarts>[0], raw: string): AccountQuery {
  const text = raw.trim().replace(/\s+/g, ' ');
  if (text === '') throw badParam('query', 'must not be empty');
  const query: AccountQuery = {};
  if (/^\d{1,15}$/.test(text) && Number(text) > 0) query.userId = Number(text);
  if (text.includes('@')) query.email = emailLookupKey(text);
  else if ([...text].length >= PREFIX_MIN) query.prefix = nickOrDomainStarts(db, nickKey(text));
  if (query.userId === undefined && query.email === undefined && query.prefix === undefined)
    throw badParam('query', `must be an id, an e-mail address or at least ${PREFIX_MIN} characters of a nick or domain`);
  return query;
}

export const userMethods: AnyMethod[] = [
  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.searchUsers',
    summary: 'Find accounts by id, nick, domain or e-mail address, blocked ones included',
    description:
      'One query matches any of: the id (digits), the e-mail address (a query with `@`, compared as sign-in compares it: the whole address, the domain in any case), the start of the nick or the domain in any case (at least two characters; white space inside counts as one space; `%` and `_` are plain characters). ' +
      'Globally blocked accounts and bots are found too. The accounts in the form admin.getUser answers, by nick (ties: by id); `count` is how many match in all.',
    params: P.object({
      query: P.string({ maxLength: ACCOUNT_QUERY_MAX, description: 'an id, an e-mail address, or the start of a nick or domain' }),
      offset: P.optional(P.uint({ default: 0, description: 'accounts to skip' })),
      count: P.optional(P.uint({ default: 20, tooMany: MAX_LIST_COUNT, description: `accounts to return; at most ${MAX_LIST_COUNT}` })),
    }),
    result: Type.Object({ count: Uint, users: Type.Array(AdminAccount) }, Strict),
    handler: async ({ services }, params) => {
      const { total, rows } = await searchAccounts(services.db, accountQuery(services.db, params.query), {
        offset: params.offset!,
        count: params.count!,
      });
      return { count: total, users: rows.map(accountObject) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.getUser',
    summary: 'Read an account with the fields only operators see',
    params: P.object({ user_id: userParam }),
    result: AccountResult,
    errors: { 101: 'user does not exist' },
    handler: async ({ services }, params) => {
      const userId = await requireUser(services, params.user_id);
      return { user: accountObject(await requireAccount(services, userId)) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.createUser',
    summary: 'Create an account that signs in with e-mail and password',
    description:
      'The e-mail is stored as the mailbox it reaches (lower case, its domain as IDNA maps it) and must be unused; the password is at least 10 characters and is stored as an argon2id hash.',
    params: P.object({
      email: P.string({ maxLength: 254, description: 'sign-in e-mail; must be unused' }),
      password: P.string({ maxLength: 1000, description: 'at least 10 characters' }),
      nick: nick('display name'),
      ...profileParams,
    }),
    result: AccountResult,
    handler: async ({ services, inTransaction }, params) => {
      const userId = await createAccount(
        services,
        { email: params.email, password: params.password, nick: params.nick, ...profileOf(params) },
        inTransaction,
      );
      return { user: accountObject(await requireAccount(services, userId)) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.updateUser',
    summary: 'Change profile fields, e-mail or password of an account',
    description:
      'Only the given fields change. A new nick appends the previous one to nicks_old. A new password ends every session of the account.',
    params: P.object({
      user_id: userParam,
      nick: P.optional(nick('display name')),
      email: P.optional(P.string({ maxLength: 254, description: 'new sign-in e-mail; must be unused' })),
      password: P.optional(P.string({ maxLength: 1000, description: 'at least 10 characters; ends every session' })),
      ...profileParams,
    }),
    result: AccountResult,
    errors: { 101: 'user does not exist' },
    handler: async ({ services, inTransaction }, params) => {
      const userId = await requireUser(services, params.user_id);
      const row = await updateAccount(
        services,
        userId,
        { nick: params.nick, email: params.email, password: params.password, ...profileOf(params) },
        inTransaction,
      );
      return { user: accountObject(row) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.setTotp',
    summary: 'Turn on sign-in by one-time code for an account, with a new secret',
    description:
      'Generates a new secret (replacing any earlier one) and answers it with an otpauth:// URI for authenticator apps. From now on auth.signin answers a totp_session_token for this account.',
    params: P.object({ user_id: userParam }),
    result: TotpResult,
    errors: { 101: 'user does not exist' },
    handler: async ({ services, inTransaction }, params) => {
      const userId = await requireUser(services, params.user_id);
      const account = await requireAccount(services, userId);
      const secret = new Secret({ size: 20 });
      await setAccountState(services, userId, { totp_secret: services.db.secrets.seal(secret.base32) }, inTransaction);
      const totp = new TOTP({
        issuer: TOTP_ISSUER,
        label: account.email ?? account.domain ?? String(userId),
        algorithm: 'SHA1',
        digits: 6,
        period: 30,
        secret,
      });
      return { user_id: userId, secret: secret.base32, otpauth_uri: totp.toString() };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.clearTotp',
    summary: 'Turn off sign-in by one-time code for an account',
    params: P.object({ user_id: userParam }),
    result: AccountResult,
    errors: { 101: 'user does not exist' },
    handler: async ({ services, inTransaction }, params) => {
      const userId = await requireUser(services, params.user_id);
      return { user: accountObject(await setAccountState(services, userId, { totp_secret: null }, inTransaction)) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.banUser',
    summary: 'Block an account globally and end all its sessions',
    description:
      'Sign-in and TOTP verification answer 412, users.get shows the account as inactive "global_ban", every token of the account stops working in every process, ' +
      'and its open trades, offered or received, become invalid (4).',
    params: P.object({ user_id: userParam }),
    result: AccountResult,
    errors: { 101: 'user does not exist' },
    handler: async ({ services, inTransaction }, params) => {
      const userId = await requireUser(services, params.user_id);
      const row = await endingOpenTrades(services, inTransaction, { userId }, (banning) =>
        setAccountState(services, userId, { global_ban: 1 }, banning),
      );
      return { user: accountObject(row) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.unbanUser',
    summary: 'Lift the global block of an account',
    description: 'Sessions ended by the ban stay ended; the user signs in again.',
    params: P.object({ user_id: userParam }),
    result: AccountResult,
    errors: { 101: 'user does not exist' },
    handler: async ({ services, inTransaction }, params) => {
      const userId = await requireUser(services, params.user_id);
      return { user: accountObject(await setAccountState(services, userId, { global_ban: 0 }, inTransaction)) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.muteUser',
    summary: 'Forbid an account to write to the chat until a time',
    description:
      'Give muted_until (Unix time, seconds) or duration (seconds from now); a mute ends by the end of the year 9999 at the latest. ' +
      'muted_until = 0 lifts the mute. gchat.send answers 104 with data.muted_until while muted.',
    params: P.object({
      user_id: userParam,
      muted_until: P.optional(P.uint({ maximum: LATEST_MUTE_END, description: 'Unix time, seconds; 0 lifts the mute' })),
      duration: P.optional(P.uint({ minimum: 1, maximum: LATEST_MUTE_END, description: 'seconds from now' })),
    }),
    result: AccountResult,
    errors: { 101: 'user does not exist' },
    handler: async ({ services, inTransaction }, params) => {
      if ((params.muted_until === undefined) === (params.duration === undefined))
        throw badParam('muted_until', 'give either muted_until or duration');
      const userId = await requireUser(services, params.user_id);
      const until = params.duration !== undefined ? nowSeconds(services) + params.duration : params.muted_until!;
      if (until > LATEST_MUTE_END) throw badParam('duration', 'the mute would end after the year 9999');
      return { user: accountObject(await setAccountState(services, userId, { muted_until: until === 0 ? null : until }, inTransaction)) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.setPrivacy',
    summary: "Set who may read an account's inventory",
    description: "everyone; friends (the owner's friends only); nobody (the owner only). Others get 701 from inventory.get.",
    params: P.object({
      user_id: userParam,
      inventory_privacy: P.enum(['everyone', 'friends', 'nobody'], { description: 'who may read the inventory with inventory.get' }),
    }),
    result: AccountResult,
    errors: { 101: 'user does not exist' },
    handler: async ({ services, inTransaction }, params) => {
      const userId = await requireUser(services, params.user_id);
      return {
        user: accountObject(await setAccountState(services, userId, { inventory_privacy: params.inventory_privacy }, inTransaction)),
      };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.killSessions',
    summary: 'End every session of an account',
    description: 'Access and refresh tokens of the account (bot tokens included) stop working at once in every process.',
    params: P.object({ user_id: userParam }),
    result: UserIdResult,
    errors: { 101: 'user does not exist' },
    handler: async ({ services, inTransaction }, params) => {
      const userId = await requireUser(services, params.user_id);
      await revokeAllSessions(services, userId, inTransaction);
      return { user_id: userId };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.createBot',
    summary: 'Create a bot account owned by a user',
    description: "The owner then issues the bot's tokens with bots.getToken. A bot cannot own bots.",
    params: P.object({
      owner_id: P.idOrDomain({ description: 'id or domain of the owner' }),
      nick: nick('display name of the bot'),
      ...profileParams,
    }),
    result: AccountResult,
    errors: { 101: 'the owner does not exist' },
    handler: async ({ services, inTransaction }, params) => {
      const ownerId = await requireUser(services, params.owner_id, { parameter: 'owner_id' });
      const owner = await requireAccount(services, ownerId);
      if (owner.bot_owner_id !== null) throw badParam('owner_id', 'is a bot; a bot cannot own bots');
      const userId = await createAccount(services, { nick: params.nick, botOwnerId: ownerId, ...profileOf(params) }, inTransaction);
      return { user: accountObject(await requireAccount(services, userId)) };
    },
  }),
];
