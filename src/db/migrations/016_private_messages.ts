import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * Private messages: the timeline of changes to conversations (im_events, whose ids are the
 * `id_last` clients resume from; a new message's msg_id is its event's id), the messages, each
 * user's side of each conversation (newest message, unread count), and who may message a user.
 */
export function privateMessagesMigration(dialect: DialectName) {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const big = 'bigint' as const;
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .alterTable('users')
        .addColumn('im_privacy', 'text', (c) => c.notNull().defaultTo('everyone'))
        .execute();

      await db.schema
        .createTable('im_events')
        .addColumn('event_id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('type', 'integer', (c) => c.notNull())
        // Null for a new message: its msg_id is the event's id.
        .addColumn('msg_id', big)
        .addColumn('user_low', big, (c) => c.notNull())
        .addColumn('user_high', big, (c) => c.notNull())
        .addColumn('ts', big, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('im_events_low').on('im_events').columns(['user_low', 'event_id']).execute();
      await db.schema.createIndex('im_events_high').on('im_events').columns(['user_high', 'event_id']).execute();

      await db.schema
        .createTable('im_messages')
        .addColumn('msg_id', big, (c) => c.primaryKey())
        .addColumn('sender_id', big, (c) => c.notNull())
        .addColumn('receiver_id', big, (c) => c.notNull())
        .addColumn('user_low', big, (c) => c.notNull())
        .addColumn('user_high', big, (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('ts_created', big, (c) => c.notNull())
        .addColumn('is_read', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('send_id', 'text')
        .addColumn('deleted_at', big)
        .execute();
      await db.schema.createIndex('im_messages_pair').on('im_messages').columns(['user_low', 'user_high', 'msg_id']).execute();
      await sql`create unique index im_messages_send_id on im_messages (sender_id, send_id) where send_id is not null`.execute(db);
      await sql`create index im_messages_unread on im_messages (receiver_id, sender_id) where is_read = 0`.execute(db);

      await db.schema
        .createTable('im_dialogs')
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('partner_id', big, (c) => c.notNull())
        .addColumn('last_msg_id', big)
        .addColumn('new_counter', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('im_dialogs_pk', ['user_id', 'partner_id'])
        .execute();
      await db.schema.createIndex('im_dialogs_newest').on('im_dialogs').columns(['user_id', 'last_msg_id']).execute();
    },
  };
}
