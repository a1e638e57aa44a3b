import type { Executor } from '../db/connection.js';

/** Every table of the world, read at once, in the order of the file. */
export async function readStoredWorld(db: Executor) {
  return awaitAll({
    collections: db.selectFrom('collections').selectAll().orderBy('collection_id').execute(),
    qualities: db.selectFrom('qualities').selectAll().orderBy('quality_id').execute(),
    itemTypes: db.selectFrom('item_types').selectAll().orderBy('type').execute(),
    protos: db.selectFrom('item_protos').selectAll().orderBy('item_proto_id').execute(),
    users: db.selectFrom('users').selectAll().orderBy('user_id').execute(),
    items: db.selectFrom('items').selectAll().where('state', '=', 'owned').orderBy('item_id').execute(),
    equipped: db.selectFrom('equipped').selectAll().execute(),
    friendships: db
      .selectFrom('friendships')
      .selectAll()
      .whereRef('user_id', '<', 'friend_id')
      .orderBy('user_id')
      .orderBy('friend_id')
      .execute(),
    requests: db.selectFrom('friend_requests').selectAll().orderBy('from_user_id').orderBy('to_user_id').execute(),
    blocks: db.selectFrom('blocks').selectAll().orderBy('user_id').orderBy('blocked_user_id').execute(),
    chatState: db.selectFrom('chat_state').selectAll().where('id', '=', 1).executeTakeFirst(),
    messages: db.selectFrom('chat_messages').selectAll().where('deleted_at', 'is', null).orderBy('msg_seq').execute(),
    promocodes: db.selectFrom('promocodes').selectAll().orderBy('code').execute(),
    trades: db.selectFrom('trades').selectAll().orderBy('trade_id').execute(),
    tradeItems: db.selectFrom('trade_items').selectAll().orderBy('trade_id').orderBy('item_id').execute(),
    moves: db.selectFrom('trade_moves').selectAll().orderBy('move_id').execute(),
  });
}

/** Awaits every promise of a record at once: the record of their values. */
async function awaitAll<T extends Record<string, Promise<unknown>>>(promises: T): Promise<{ [K in keyof T]: Awaited<T[K]> }> {
  const entries = await Promise.all(Object.entries(promises).map(async ([name, promise]) => [name, await promise] as const));
  return Object.fromEntries(entries) as { [K in keyof T]: Awaited<T[K]> };
}
