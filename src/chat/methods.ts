import { defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { GchatGetResult, GchatSendResult } from './schemas.js';
import { MAX_MESSAGE_LENGTH, sendMessage } from './send.js';

export const gchatGet = defineMethod({
  name: 'gchat.get',
  summary: 'The global chat: the newest messages, the chat status, and the users and prototypes they name',
  description:
    'Served from memory and kept current on every write in every server process. The `online` flags of the users are recomputed at least every 30 seconds.',
  auth: 'none',
  params: P.object({}),
  result: GchatGetResult,
  handler: async ({ services }) => services.chat.answerData(),
});

export const gchatSend = defineMethod({
  name: 'gchat.send',
  summary: 'Write a message to the global chat',
  description:
    '`@<user_id>` mentions of existing users are listed in user_ids_mentioned. A message starting with `!` is pushed live to ' +
    'subscribers but not kept. Bots: a message that mentions someone and lacks is_public=1 is pushed only to the mentioned ' +
    'users with no block, either way, between them and the bot or its owner, and not kept; public messages are limited to a ' +
    'few an hour, all different. Moderators may write in a closed chat and are exempt from slow mode; emote-only mode binds ' +
    'everyone.',
  auth: 'required',
  bots: true,
  params: P.object({
    message: P.string({
      maxLength: 10_000,
      description:
        `1 to ${MAX_MESSAGE_LENGTH} characters once surrounding spaces are removed, at least one of them visible; ` +
        'no control characters but tabs and line breaks, no bidirectional embeddings, overrides or isolates, no lone surrogates',
    }),
    is_public: P.optional(P.bit({ description: 'bots only: show a message that mentions users to everyone (and keep it)' })),
  }),
  result: GchatSendResult,
  errors: {
    104: 'the caller is muted; data.muted_until says until when',
    107: "a bot's message for the users it mentions: each of them has blocked the bot or its owner, or is blocked by them",
    1203: 'the chat refuses the message; data.type: DISABLED (closed), EMOTES_ONLY (emote-only mode), BOT_LIMITATIONS (bot quota or repeated text)',
  },
  handler: async ({ services, caller }, params) => ({
    msg_id: await sendMessage(services, caller.userId, params.message, params.is_public === 1),
  }),
});
