import { Type } from '@sinclair/typebox';
import { Bit, Strict, Ts, Uint } from '../api/schema-types.js';
import { Rank } from '../users/index.js';

/** An account as the admin API shows it. */
export const AdminAccount = Type.Object(
  {
    user_id: Uint,
    email: Type.Optional(Type.String()),
    domain: Type.Optional(Type.String()),
    nick: Type.String(),
    nicks_old: Type.Array(Type.String()),
    gender: Uint,
    avatar: Type.String(),
    avatar_key: Type.Optional(Type.String()),
    profile_cover: Type.Optional(Type.String()),
    approved: Bit,
    vip: Bit,
    moderator: Bit,
    superadmin: Bit,
    rank: Type.Optional(Rank),
    games: Uint,
    games_wins: Uint,
    xp: Uint,
    xp_level: Uint,
    global_ban: Bit,
    muted_until: Type.Integer({ minimum: 0, description: 'Unix time until which the user may not write to the chat; 0 = not muted' }),
    inventory_privacy: Type.Union([Type.Literal('everyone'), Type.Literal('friends'), Type.Literal('nobody')]),
    totp: Type.Integer({ minimum: 0, maximum: 1, description: '1 when sign-in asks for a one-time code' }),
    bot_owner: Type.Optional(Uint),
    created_at: Uint,
    last_seen: Uint,
  },
  { ...Strict, $id: 'AdminAccount', description: 'An account with the fields only operators see' },
);

export const AccountResult = Type.Object({ user: AdminAccount }, Strict);
export const UserIdResult = Type.Object({ user_id: Uint }, Strict);

export const TotpResult = Type.Object(
  {
    user_id: Uint,
    secret: Type.String({ description: 'base32 secret (RFC 4648), SHA-1, 6 digits, 30-second step' }),
    otpauth_uri: Type.String({ description: 'otpauth:// URI for authenticator apps (QR code content)' }),
  },
  Strict,
);

export const RelationResult = Type.Object(
  {
    user_id: Uint,
    other_user_id: Uint,
    friendship: Type.Integer({
      minimum: 0,
      maximum: 6,
      description:
        'relation of user_id to other_user_id afterwards, as users.get shows it: 0 none, 1 friends, 2 outgoing request, 3 incoming request, 4 blocked them, 5 blocked by them, 6 both',
    }),
  },
  Strict,
);

export const ChatStatusResult = Type.Object(
  {
    status: Type.Object({ closed: Type.Boolean(), slowmode: Type.Boolean(), emoteonly: Type.Boolean() }, Strict),
    slowmode_interval: Type.Integer({ minimum: 1, description: 'seconds between two messages of one user in slow mode' }),
  },
  Strict,
);

export const AuditEntrySchema = Type.Object(
  {
    audit_id: Uint,
    ts: Ts,
    key_fingerprint: Type.String(),
    ip: Type.String(),
    action: Type.String(),
    params: Type.Record(Type.String(), Type.Unknown()),
    result_code: Type.Integer({
      minimum: -1,
      description:
        'the code the call answered (0: the action was carried out); -1 only in entries written by earlier versions, which recorded a call before running it: its outcome is unknown',
    }),
    target: Type.Optional(
      Type.String({
        description:
          'what the call acted on, `<kind>:<id>`, read from its parameters (the first of user_id, item_id, thing_id, trade_id, listing_id, msg_id, app_id, item_proto_id, case_item_proto_id, collection_id that it names): `user:2`, `item:17`, `message:abc`; absent when they name none (and in entries written before this field existed, unless they named a user by a plain id)',
      }),
    ),
  },
  { ...Strict, $id: 'AuditEntry' },
);
