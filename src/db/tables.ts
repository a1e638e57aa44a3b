import type { ColumnType, Generated } from 'kysely';
import type { Flag } from './flags.js';

/** Integer column whose value the database assigns on insert. */
type Id = Generated<number>;
/** Column with a database default: optional on insert. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;

/** Who may read a user's inventory. */
export type InventoryPrivacy = 'everyone' | 'friends' | 'nobody';

/** An item's life: its owner holds it, it was used up (opened, crafted, ...), or an operator took it back. */
/** `listed`: on sale on the market, still its seller's (every check of an owned item refuses it). */
export type ItemState = 'owned' | 'listed' | 'consumed' | 'revoked';

/** Where an item is equipped: in games (cards, generator, joke) or on the profile (badge). */
export type EquipSlot = 'cards' | 'generator' | 'joke' | 'badge';

/** What a draw opened: a case, or a gift set for a friend. */
export type DrawKind = 'case' | 'gift';

export interface UsersTable {
  user_id: Id;
  email: string | null;
  password_hash: string | null;
  /** Sealed with the database's secret key (`v1:...`, see SecretBox); null while two-factor sign-in is off. */
  totp_secret: string | null;
  totp_last_step: number | null;
  domain: string | null;
  nick: Defaulted<string>;
  /** The nick in lower case, for users.search: written with every nick (users/search-keys.ts). */
  nick_lower: string;
  nicks_old: Defaulted<string>;
  gender: Defaulted<Flag>;
  avatar: Defaulted<string>;
  avatar_key: string | null;
  profile_cover: string | null;
  approved: Defaulted<Flag>;
  vip: Defaulted<Flag>;
  moderator: Defaulted<Flag>;
  superadmin: Defaulted<Flag>;
  rank: string | null;
  games: Defaulted<number>;
  games_wins: Defaulted<number>;
  xp: Defaulted<number>;
  xp_level: Defaulted<number>;
  global_ban: Defaulted<Flag>;
  captcha_always: Defaulted<Flag>;
  inventory_privacy: Defaulted<InventoryPrivacy>;
  /** 1: anyone may offer this user trades; 0: nobody */
  trades_income: Defaulted<Flag>;
  /** 1: only friends may (when trades_income is 1) */
  trades_income_from_friends: Defaulted<Flag>;
  /** 1: gifts are accepted even where trades are not */
  trades_income_gifts: Defaulted<Flag>;
  /** 1: a gift completes at once, as if accepted */
  trades_income_gifts_autoaccept: Defaulted<Flag>;
  muted_until: number | null;
  bot_owner_id: number | null;
  always_online: Defaulted<Flag>;
  last_seen: Defaulted<number>;
  created_at: number;
  email_verified: Defaulted<Flag>;
  /** Who may send this user private messages. */
  im_privacy: Defaulted<ImPrivacy>;
  /** A TOTP secret set up by account.totpSetup, active once account.totpEnable confirms it; sealed like totp_secret. */
  totp_pending: Defaulted<string | null>;
}

export interface SessionsTable {
  session_id: Id;
  user_id: number;
  family_id: string;
  access_hash: string;
  refresh_hash: string | null;
  ip: string | null;
  is_bot: Defaulted<Flag>;
  expires_at: number;
  created_at: number;
  revoked_at: number | null;
  refreshed_at: number | null;
  user_agent: Defaulted<string | null>;
  /** Seconds; written at most once a minute per session. */
  last_used: Defaulted<number | null>;
  /** Bit mask of the OAuth scopes of a session an app obtained; null for a player's own sign-in (every method). */
  scopes: Defaulted<number | null>;
  /** The OAuth app the session was issued to; null for a player's own sign-in. */
  app_id: Defaulted<number | null>;
}

export interface AccountTokensTable {
  token_hash: string;
  user_id: number;
  purpose: 'verify_email' | 'reset_password';
  email: string | null;
  expires_at: number;
  used_at: number | null;
  created_at: number;
}

export interface RecoveryCodesTable {
  user_id: number;
  code_hash: string;
  used_at: number | null;
}

export interface TotpChallengesTable {
  challenge_hash: string;
  user_id: number;
  ip: string | null;
  expires_at: number;
  failures: Defaulted<number>;
  used_at: number | null;
  created_at: number;
}

export interface CollectionsTable {
  collection_id: number;
  title: string;
}

export interface QualitiesTable {
  quality_id: number;
  title: string;
  coeff_rent: number;
}

export interface ItemTypesTable {
  type: number;
  title: string;
}

export interface ItemProtosTable {
  item_proto_id: number;
  type: number;
  quality_id: Defaulted<number>;
  title: string;
  description: Defaulted<string>;
  image: string | null;
  collection_id: number | null;
  monopoly_id: number | null;
  sticker_group_id: number | null;
  /** JSON object */
  prices: string | null;
  key_item_proto_id: number | null;
  /** JSON array */
  case_item_proto_ids: string | null;
  /** JSON array; named drop_list because DROP is an SQL keyword */
  drop_list: string | null;
  /** JSON array */
  twin_item_proto_ids: string | null;
  can_craft: Defaulted<Flag>;
  craft_result: Defaulted<Flag>;
  item_proto_status: number | null;
  /** JSON object with further prototype data (legacy fields, uses) */
  extra: string | null;
}

export interface ItemsTable {
  item_id: Id;
  user_id: number;
  item_proto_id: number;
  type: number;
  quality_id: number;
  ts_owned: number;
  ts_can_trade: Defaulted<number>;
  state: Defaulted<ItemState>;
  ended_at: number | null;
  craft_id: number | null;
  created_by_craft_id: number | null;
  /** JSON object of per-item data (autograph, souvenir, moneybox, uses) */
  data: string | null;
}

/** Maintained by triggers on items: owned items per user, and how many of them are stock class. */
export interface InventoryCountsTable {
  user_id: number;
  owned: number;
  stock: number;
}

export interface EquippedTable {
  item_id: number;
  user_id: number;
  slot: EquipSlot;
  game: string | null;
  monopoly_id: number | null;
}

export interface CraftsTable {
  craft_id: Id;
  user_id: number;
  ts: number;
  result_item_id: number | null;
  /** JSON array of the ten consumed item ids */
  consumed_item_ids: string;
}

export interface RevocationsTable {
  revocation_id: Id;
  item_id: number;
  user_id: number;
  ts: number;
  reason: string | null;
}

export interface FriendshipsTable {
  user_id: number;
  friend_id: number;
  since: number;
}

export interface FriendRequestsTable {
  from_user_id: number;
  to_user_id: number;
  ts: number;
}

export interface BlocksTable {
  user_id: number;
  blocked_user_id: number;
  ts: number;
}

export interface ChatMessagesTable {
  msg_seq: Id;
  msg_id: string;
  type: number;
  user_id: number;
  ts: number;
  text: string | null;
  /** JSON array */
  user_ids_mentioned: string | null;
  case_item_proto_id: number | null;
  drop_item_proto_id: number | null;
  user_id_receiver: number | null;
  item_proto_id: number | null;
  /** JSON array */
  item_proto_ids: string | null;
  deleted_at: number | null;
}

export interface ChatStateTable {
  id: number;
  closed: Defaulted<Flag>;
  slowmode: Defaulted<Flag>;
  emoteonly: Defaulted<Flag>;
  slowmode_interval: Defaulted<number>;
}

export interface AuditLogTable {
  audit_id: Id;
  ts: number;
  key_fingerprint: string;
  ip: string;
  action: string;
  /** JSON object, secrets removed */
  params: string;
  result_code: number;
  /** What the call acted on, `<kind>:<id>` (e.g. `user:2`), from its parameters; null when they name nothing. */
  target: string | null;
}

export interface TradesTable {
  trade_id: Id;
  user_id_from: number;
  user_id_to: number;
  /** 0 open, 1 accepted, 2 declined, 3 revoked, 4 invalid, 5 expired */
  status: Defaulted<number>;
  create_time: number;
  reaction_time: number | null;
}

/** The items of a trade as they were when it was made (the answers show them so). */
export interface TradeItemsTable {
  trade_id: number;
  item_id: number;
  /** 0: offered by user_id_from; 1: asked of user_id_to */
  side: Flag;
  user_id: number;
  item_proto_id: number;
  ts_owned: number;
  ts_can_trade: number;
  data: string | null;
}

/** Append-only: every item a trade moved. */
export interface TradeMovesTable {
  move_id: Id;
  trade_id: number;
  item_id: number;
  from_user_id: number;
  to_user_id: number;
  ts: number;
}

/** An address or issued device token (its SHA-256) an account signed in from. */
export interface SigninSourcesTable {
  user_id: number;
  kind: 'ip' | 'device';
  value: string;
  last_seen: number;
}

/** One opening of a case or gift set. */
export interface DrawsTable {
  draw_id: Id;
  ts: number;
  /** who opened it */
  user_id: number;
  /** who received the items: the opener, or the friend a gift set was opened for */
  receiver_user_id: number;
  kind: DrawKind;
  case_item_id: number;
  case_item_proto_id: number;
  key_item_id: number | null;
  key_item_proto_id: number | null;
  /** JSON array */
  result_item_ids: string;
  /** JSON array */
  result_item_proto_ids: string;
  /** SHA-256 (hex, 16 characters) of `odds` */
  odds_version: string;
  /** JSON array of the published entries the draw used: `[{item_proto_id, weight}]` */
  odds: string;
  request_id: string | null;
  /** JSON text of the answer's items, given again for a retry with the same request_id */
  answer: string;
}

export interface PromocodesTable {
  code: string;
  /** JSON array */
  item_proto_ids: string;
  max_uses: number | null;
  uses: Defaulted<number>;
  ts_expires: number | null;
  disabled: Defaulted<Flag>;
  created_at: number;
  /** kopecks each redemption pays */
  money: Defaulted<number>;
}

export interface PromocodeUsesTable {
  code: string;
  user_id: number;
  ts: number;
  /** JSON array of the items granted */
  item_ids: string;
}

/** One row: a known text sealed with the secret key, checked on every start. */
export interface SecretKeyCheckTable {
  id: number;
  /** Names the key without revealing it, for the message about a wrong key. */
  fingerprint: string;
  verifier: string;
  created_at: number;
}

export interface OauthAppsTable {
  app_id: Id;
  name: string;
  /** SHA-256 of the secret; null for a public client, which has none. */
  secret_hash: string | null;
  /** JSON array of the redirect URIs, each matched exactly. */
  redirect_uris: string;
  /** Bit mask of the scopes the app may ask for. */
  scopes: Defaulted<number>;
  public_client: Defaulted<Flag>;
  active: Defaulted<Flag>;
  created_at: number;
}

export interface OauthCodesTable {
  code_hash: string;
  app_id: number;
  user_id: number;
  redirect_uri: string;
  scopes: number;
  /** PKCE S256 challenge (base64url), when the dialog was given one. */
  code_challenge: string | null;
  expires_at: number;
  used_at: Defaulted<number | null>;
  /** The session family the exchange issued: revoked when the code is presented again. */
  family_id: Defaulted<string | null>;
}

export interface OauthConsentsTable {
  user_id: number;
  app_id: number;
  scopes: number;
  granted_at: number;
}

export type ImPrivacy = 'everyone' | 'friends' | 'nobody';

/** The timeline of private conversations: what `im.sync` answers after a client's `id_last`. */
export interface ImEventsTable {
  event_id: Id;
  /** 1 new message, 2 messages read, 3 message deleted */
  type: number;
  /** The message; null for a new message, whose msg_id is the event's id. */
  msg_id: number | null;
  user_low: number;
  user_high: number;
  ts: number;
}

export interface ImMessagesTable {
  msg_id: number;
  sender_id: number;
  receiver_id: number;
  user_low: number;
  user_high: number;
  text: string;
  ts_created: number;
  is_read: Defaulted<Flag>;
  /** The sender's idempotency key, unique per sender. */
  send_id: string | null;
  deleted_at: number | null;
}

/** One user's side of a conversation. */
export interface ImDialogsTable {
  user_id: number;
  partner_id: number;
  /** The newest message not deleted; null when none is left. */
  last_msg_id: number | null;
  /** Messages of the partner this user has not read. */
  new_counter: Defaulted<number>;
}

export interface BalancesTable {
  user_id: number;
  /** kopecks */
  balance: Defaulted<number>;
}

export interface LedgerTransfersTable {
  transfer_id: Id;
  ts: number;
  kind: string;
  item_id: number | null;
  item_proto_id: number | null;
  listing_id: number | null;
  reason: string | null;
}

/** One side of a transfer: a user's account (user_id) or the platform's (negative ids). */
export interface LedgerEntriesTable {
  entry_id: Id;
  transfer_id: number;
  account_id: number;
  kind: string;
  amount: number;
  balance_after: number | null;
}

export interface MarketListingsTable {
  listing_id: Id;
  item_id: number;
  seller_id: number;
  item_proto_id: number;
  type: number;
  quality_id: number;
  price: number;
  ts_listed: number;
  ts_expires: number;
}

export interface MarketSalesTable {
  sale_id: Id;
  listing_id: number;
  item_id: number;
  item_proto_id: number;
  seller_id: number;
  buyer_id: number;
  price: number;
  fee: number;
  ts: number;
}

export interface ShopPurchasesTable {
  user_id: number;
  request_id: string;
  ts: number;
  /** JSON text of the answer, given again for a retry with the same request_id */
  answer: string;
}

export interface MarketFreezesTable {
  user_id: number;
  ts: number;
  reason: string;
}

/** A game of the classic board game; its state is rebuilt from game_actions. */
export interface GamesTable {
  game_id: Id;
  status: 'live' | 'over';
  /** JSON: the board config (the game SDK's setup.config). */
  config: string;
  /** JSON: the players (setup.players, with `computer` for the built-in computer players). */
  players: string;
  /** JSON: the engine's options. */
  options: string;
  seed: string;
  /** Milliseconds. */
  ts_start: number;
  ts_end: number | null;
  winner_user_id: number | null;
  /** Milliseconds: when the next timeout of a live game falls due (null when none will). */
  deadline: number | null;
  /** How many actions game_actions holds for it: the version of its state. */
  actions: Defaulted<number>;
  /** JSON, once over: each seat's result, [{user_id, place, xp, rank_pts}] in seat order. */
  results: Defaulted<string | null>;
}

/** A player's rank in one season of the game: points and rated games. */
export interface GameRanksTable {
  user_id: number;
  season: number;
  pts: number;
  games: number;
  wins: number;
}

export interface GameActionsTable {
  game_id: number;
  seq: number;
  /** Null for a timeout (the default action of whoever was expected). */
  user_id: number | null;
  /** JSON: the action as the engine takes it. */
  action: string;
  /** Milliseconds. */
  ts: number;
}

export interface GamePlayersTable {
  game_id: number;
  user_id: number;
}

/** An account playing a live game: at most one each. */
export interface GameLivePlayersTable {
  user_id: number;
  game_id: number;
}

/** A room of the lobby: waiting for players (status 0), or started (1) as the game `game_id`. */
export interface RoomsTable {
  room_id: Id;
  status: number;
  admin_id: number;
  game_submode: number;
  maxplayers: number;
  private: number;
  autostart: number;
  game_timers: number;
  br_corner: number;
  /** The version realtime patches carry; one more at each change. */
  v: number;
  /** Seconds. */
  ts_created: number;
  /** JSON: the players in seat order, written when the game starts (room_members hold them before). */
  players: string | null;
  game_id: number | null;
  gs_id: string | null;
}

/** A player waiting in a room; a player is in one room at most (the primary key). */
export interface RoomMembersTable {
  user_id: number;
  room_id: number;
  seat: number;
  /** Seconds. */
  ts_joined: number;
}

export interface RoomInvitesTable {
  room_id: number;
  user_id: number;
  inviter_id: number;
  /** Seconds. */
  ts: number;
}

/** A user kicked from a room: not let in again. */
export interface RoomBansTable {
  room_id: number;
  user_id: number;
}

/** An operator's mission: a goal of the week (`play` or `win` `target` games) and its reward. */
export interface MissionsTable {
  mission_id: Generated<number>;
  name: string;
  goal: 'play' | 'win';
  target: number;
  /** `money`: `reward` units of the currency; `item`: one item of prototype `reward`. */
  reward_type: 'money' | 'item';
  reward: number;
  active: number;
  ts_created: number;
}

/** A player's count towards a mission in one week (`week`: Unix time of its Monday, 00:00 UTC). */
export interface MissionProgressTable {
  mission_id: number;
  user_id: number;
  week: number;
  counter: number;
  /** When the reward was given (Unix time); null until the target is reached. */
  ts_rewarded: number | null;
}

/** A player's games, wins and experience in a period: `w<Monday's Unix time>` (a week) or `s<YYYY-MM>` (a season). */
export interface GameStatsTable {
  period: string;
  user_id: number;
  games: number;
  wins: number;
  xp: number;
}

export interface Tables {
  users: UsersTable;
  sessions: SessionsTable;
  totp_challenges: TotpChallengesTable;
  collections: CollectionsTable;
  qualities: QualitiesTable;
  item_types: ItemTypesTable;
  item_protos: ItemProtosTable;
  items: ItemsTable;
  inventory_counts: InventoryCountsTable;
  equipped: EquippedTable;
  crafts: CraftsTable;
  revocations: RevocationsTable;
  friendships: FriendshipsTable;
  friend_requests: FriendRequestsTable;
  blocks: BlocksTable;
  chat_messages: ChatMessagesTable;
  chat_state: ChatStateTable;
  audit_log: AuditLogTable;
  trades: TradesTable;
  trade_items: TradeItemsTable;
  trade_moves: TradeMovesTable;
  draws: DrawsTable;
  promocodes: PromocodesTable;
  promocode_uses: PromocodeUsesTable;
  account_tokens: AccountTokensTable;
  recovery_codes: RecoveryCodesTable;
  signin_sources: SigninSourcesTable;
  secret_key_check: SecretKeyCheckTable;
  oauth_apps: OauthAppsTable;
  oauth_codes: OauthCodesTable;
  oauth_consents: OauthConsentsTable;
  im_events: ImEventsTable;
  im_messages: ImMessagesTable;
  im_dialogs: ImDialogsTable;
  balances: BalancesTable;
  ledger_transfers: LedgerTransfersTable;
  ledger_entries: LedgerEntriesTable;
  market_listings: MarketListingsTable;
  market_sales: MarketSalesTable;
  market_freezes: MarketFreezesTable;
  shop_purchases: ShopPurchasesTable;
  games: GamesTable;
  game_actions: GameActionsTable;
  game_players: GamePlayersTable;
  game_live_players: GameLivePlayersTable;
  game_ranks: GameRanksTable;
  rooms: RoomsTable;
  room_members: RoomMembersTable;
  room_invites: RoomInvitesTable;
  room_bans: RoomBansTable;
  missions: MissionsTable;
  mission_progress: MissionProgressTable;
  game_stats: GameStatsTable;
}
