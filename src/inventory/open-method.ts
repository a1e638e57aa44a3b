import { SerializedData, defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { openItem } from './open.js';
import { OpenResult } from './schemas.js';

export const MAX_REQUEST_ID_LENGTH = 64;

export const inventoryOpen = defineMethod({
  name: 'inventory.open',
  summary: 'Open a case with its key, or a gift set',
  description:
    'A case consumes itself and its key and gives one item drawn from its drop list: each entry with the published chance, its weight over the sum of the weights, drawn with cryptographic randomness. ' +
    'A gift set consumes itself and gives every item of its list; opened for a friend (user_id_receiver), the friend receives them, ' +
    'marked as a gift, when their trade settings accept gifts from the caller. ' +
    'What an opening gives keeps the trade lock of what it consumed: the latest `ts_can_trade` of the case and key, or never tradable ' +
    'when either is; a trade-locked gift set opens only for its owner. ' +
    'All or nothing, and exactly once: of concurrent opens of one item one succeeds and the others answer 603. ' +
    'With request_id, a repeated request (a retry after a lost answer) answers the first result again and opens nothing more. ' +
    'Every opening is recorded with the odds it used, and announced in the chat (message type 2, or 3 for a friend) from the class the server sets.',
  auth: 'required',
  extension: true,
  params: P.object({
    item_id: P.uint({ minimum: 1, description: 'an owned case or gift set' }),
    key_item_id: P.optional(P.uint({ minimum: 1, description: 'an owned key of the case (for cases that name a key_item_proto_id)' })),
    user_id_receiver: P.optional(P.uint({ minimum: 1, description: 'gift sets: a friend who receives the items' })),
    request_id: P.optional(
      P.string({
        minLength: 1,
        maxLength: MAX_REQUEST_ID_LENGTH,
        description: "the client's idempotency key: the same caller and request_id answer the first result again",
      }),
    ),
  }),
  result: OpenResult,
  errors: {
    101: 'user_id_receiver does not exist or is globally blocked',
    603: 'an item is not yours or no longer owned, the key does not open this case, or a gift set for a friend is trade-locked',
    701: "the friend's trade settings refuse gifts from the caller",
    624: 'the item cannot be opened (neither a case nor a gift set)',
  },
  handler: async ({ services, caller }, params) => {
    const opened = await openItem(services, {
      userId: caller.userId,
      itemId: params.item_id,
      ...(params.key_item_id !== undefined ? { keyItemId: params.key_item_id } : {}),
      ...(params.user_id_receiver !== undefined ? { receiverId: params.user_id_receiver } : {}),
      ...(params.request_id !== undefined ? { requestId: params.request_id } : {}),
    });
    return new SerializedData(`{"items":${opened.itemsJson}}`);
  },
});
