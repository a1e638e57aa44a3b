import { ApiError, Code, authError, badParam } from '../api/errors.js';
import { Friendship, friendshipValues, isBlock } from '../friends/index.js';
import { sha256 } from '../infra/secrets.js';
import type { CounterStore } from '../infra/counters.js';
import { loadProfiles, type Profile } from '../users/index.js';
import type { Services } from '../services.js';
import { isOnlyEmoticons } from './emoticons.js';
import { mentionedIds } from './mentions.js';
import { storeMessage } from './messages.js';
import { selectAuthor } from './queries.js';
import { ChatRuntime } from './runtime.js';
import type { TextMessage } from './schemas.js';
import { chatUserOf } from './users.js';

export const MAX_MESSAGE_LENGTH = 500;
const BOT_WINDOW_SECONDS = 3600;

/**
 * Control characters other than tabs and line breaks, and the bidirectional embedding, override
 * and isolate controls (the marks LRM, RLM and ALM, which right-to-left writing needs, pass).
 */
const CONTROL = /(?![\t\n\r])\p{Cc}|[\u202A-\u202E\u2066-\u2069]/u;
/**
 * What shows nothing on its own: spaces and line breaks, characters meant to be ignored (format
 * characters, variation selectors, Hangul fillers), marks that only combine, the braille blank.
 */
const BLANK = /[\p{Z}\s\p{Default_Ignorable_Code_Point}\p{Cf}\p{Mn}\p{Me}\u2800]/gu;

export type RestrictionType = 'DISABLED' | 'STRICT' | 'EMOTES_ONLY' | 'BOT_LIMITATIONS';

export function restricted(type: RestrictionType, description: string): ApiError {
  return new ApiError(Code.CHAT_RESTRICTED, description, { type });
}

/** A counter hit that can be taken back when a later rule refuses the message. */
interface Taken {
  undo(): Promise<unknown>;
}

/**
 * Counts one use of `key`; beyond `max` in the window the use is taken back and refused, so
 * the counter only ever holds uses that went through (or are still being checked).
 */
async function take(
  counters: CounterStore,
  key: string,
  windowSeconds: number,
  max: number,
  refuse: (resetIn: number) => ApiError,
): Promise<Taken> {
  const undo = () => counters.hit(key, windowSeconds, -1);
  const hit = await counters.hit(key, windowSeconds);
  if (hit.count > max) {
    await undo();
    throw refuse(hit.resetIn);
  }
  return { undo };
}

/** The message without surrounding spaces; refused when empty, too long, invisible, or holding control characters or lone surrogates. */
function checkedText(rawText: string): string {
  if (/\p{Cs}/u.test(rawText)) throw badParam('message', 'must be valid Unicode text (it holds a lone surrogate)');
  const text = rawText.trim();
  const length = [...text].length;
  if (length < 1 || length > MAX_MESSAGE_LENGTH)
    throw badParam('message', `must be 1 to ${MAX_MESSAGE_LENGTH} characters once surrounding spaces are removed`);
  if (CONTROL.test(text))
    throw badParam('message', 'must not contain control characters (tabs and line breaks aside) or bidirectional overrides');
  if (text.replace(BLANK, '') === '') throw badParam('message', 'must contain a visible character');
  return text;
}

/** The author as the chat sees them, and the moment of sending; refused when muted, or when the chat's modes refuse the text. */
async function checkedAuthor(services: Services, userId: number, text: string) {
  // Read from the database on every send, so a mute or a moderator flag applies at once.
  const author = await selectAuthor(services.db.kysely, userId);
  if (!author) throw authError();
  const nowMs = services.clock.now();
  const now = Math.floor(nowMs / 1000);
  if (author.muted_until !== null && author.muted_until > now)
    throw new ApiError(Code.MUTED, 'you are muted in the chat', { muted_until: author.muted_until });

  const moderator = author.moderator === 1;
  const settings = services.chat.settings;
  if (!moderator && settings.closed) throw restricted('DISABLED', 'the chat is closed for writing');
  // Emote-only mode binds moderators too (they may switch it off); only closed and slow mode spare them.
  if (settings.emoteonly && !isOnlyEmoticons(text, services.chat.emoticons))
    throw restricted('EMOTES_ONLY', 'the chat is in emote-only mode: only emoticon codes such as :smile: may be written');
  return { moderator, ownerId: author.bot_owner_id, nowMs };
}

/** Counts the message against slow mode and the bot limits; each use counted is added to `taken`, so a refusal can give it back. */
async function takeSendingLimits(
  services: Services,
  userId: number,
  text: string,
  sender: { moderator: boolean; isBot: boolean; isPublic: boolean },
  taken: Taken[],
): Promise<void> {
  const { config, counters } = services;
  const settings = services.chat.settings;
  if (!sender.moderator && settings.slowmode) {
    const interval = settings.slowmode_interval;
    taken.push(
      await take(
        counters,
        // A window opened under another interval must not decide the wait under this one.
        `chat:slowmode:${userId}:${interval}`,
        interval,
        1,
        (resetIn) => new ApiError(Code.RATE_LIMIT, `slow mode: one message per ${interval} seconds`, { retry_after: resetIn }),
      ),
    );
  }
  if (sender.isBot && sender.isPublic) {
    const limit = config.chat.botHourlyLimit;
    taken.push(
      await take(counters, `chat:bot:${userId}:public`, BOT_WINDOW_SECONDS, limit, () =>
        restricted('BOT_LIMITATIONS', `a bot may post at most ${limit} public messages an hour`),
      ),
    );
    taken.push(
      await take(counters, `chat:bot:${userId}:text:${sha256(text)}`, BOT_WINDOW_SECONDS, 1, () =>
        restricted('BOT_LIMITATIONS', 'a bot may not repeat a public message within an hour'),
      ),
    );
  }
}

/**
 * Who gets a bot's message for the users it mentions: those with no block, either way, between
 * them and the bot or its owner (a bot acts for its owner); 107 when that is nobody.
 */
async function unblockedAudience(services: Services, senderIds: number[], mentioned: number[]): Promise<number[]> {
  const relations = await Promise.all(senderIds.map((id) => friendshipValues(services, id, mentioned)));
  const audience = mentioned.filter((id) => relations.every((values) => !isBlock(values.get(id) ?? Friendship.NONE)));
  if (audience.length === 0)
    throw new ApiError(Code.BLOCKED_BY_USER, 'every user the message mentions has blocked this bot or its owner, or is blocked by them');
  return audience;
}

/** Stores the message unless `kept` is false, and hands it to every process's history and subscribers; answers the stored form. */
async function deliverMessage(
  services: Services,
  userId: number,
  text: string,
  nowMs: number,
  delivery: { mentioned: number[]; rows: Map<number, Profile>; audience: number[] | null; kept: boolean },
): Promise<TextMessage> {
  const runtime = services.chat;
  const { mentioned, rows, audience, kept } = delivery;
  const users = [...new Set([userId, ...mentioned])]
    .sort((a, b) => a - b)
    .flatMap((id) => {
      const row = rows.get(id);
      return row ? [chatUserOf(services, row)] : [];
    });
  const build = (msgId: string): TextMessage => ({
    type: 1,
    user_id: userId,
    msg_id: msgId,
    ts: Math.floor(nowMs / 1000),
    text,
    user_ids_mentioned: mentioned,
  });
  const publish = (message: TextMessage, seq: number | null) =>
    runtime.publish({
      kind: 'add',
      id: ChatRuntime.eventId(),
      seq,
      message,
      users,
      item_protos: [],
      audience,
    });

  let message: TextMessage;
  let published!: Promise<void>;
  if (kept) {
    message = (await storeMessage(services, nowMs, build, (s) => (published = publish(s.message, s.seq)))).message;
  } else {
    message = build(runtime.writer.ids.next(nowMs));
    published = publish(message, null);
  }
  await published;
  return message;
}

/**
 * gchat.send: checks the message against mute, chat modes and bot rules, stores it unless it
 * is only pushed live (a `!` command, a bot's non-public message), and hands it to every
 * process's history and subscribers. Returns the msg_id.
 */
export async function sendMessage(services: Services, userId: number, rawText: string, isPublicFlag: boolean): Promise<string> {
  const text = checkedText(rawText);
  const { moderator, ownerId, nowMs } = await checkedAuthor(services, userId, text);
  const isBot = ownerId !== null;

  const candidates = mentionedIds(text);
  const rows = await loadProfiles(services, [userId, ...candidates]);
  const mentioned = candidates.filter((id) => rows.has(id));
  const isPublic = !isBot || isPublicFlag || mentioned.length === 0;
  const audience = isPublic ? null : await unblockedAudience(services, [userId, ownerId], mentioned);
  const kept = isPublic && !text.startsWith('!');

  const taken: Taken[] = [];
  try {
    await takeSendingLimits(services, userId, text, { moderator, isBot, isPublic }, taken);
    const message = await deliverMessage(services, userId, text, nowMs, { mentioned, rows, audience, kept });
    return message.msg_id;
  } catch (err) {
    await Promise.all(taken.map((t) => t.undo())).catch(() => undefined);
    throw err;
  }
}
