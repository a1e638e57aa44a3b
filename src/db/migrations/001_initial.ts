import { sql, type Kysely, type CreateTableBuilder } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * The whole schema. Ids and timestamps are 64-bit integers on both dialects so that any
 * identifier a client sends can be looked up without overflow; timestamps are Unix seconds.
 */
export function initialMigration(dialect: DialectName) {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const big = 'bigint' as const;

  function withId<T extends string>(table: CreateTableBuilder<T, never>, column: string) {
    return table.addColumn(column, idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()));
  }

  return {
    async up(db: Kysely<any>): Promise<void> {
      await withId(db.schema.createTable('users'), 'user_id')
        .addColumn('email', 'text')
        .addColumn('password_hash', 'text')
        .addColumn('totp_secret', 'text')
        .addColumn('totp_last_step', big)
        .addColumn('domain', 'text')
        .addColumn('nick', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('nicks_old', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('gender', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('avatar', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('avatar_key', 'text')
        .addColumn('profile_cover', 'text')
        .addColumn('approved', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('vip', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('moderator', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('superadmin', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('rank', 'text')
        .addColumn('games', big, (c) => c.notNull().defaultTo(0))
        .addColumn('games_wins', big, (c) => c.notNull().defaultTo(0))
        .addColumn('xp', big, (c) => c.notNull().defaultTo(0))
        .addColumn('xp_level', big, (c) => c.notNull().defaultTo(0))
        .addColumn('global_ban', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('captcha_always', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('inventory_privacy', 'text', (c) => c.notNull().defaultTo('everyone'))
        .addColumn('muted_until', big)
        .addColumn('bot_owner_id', big)
        .addColumn('always_online', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_seen', big, (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', big, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('users_email').unique().on('users').column('email').execute();
      await db.schema.createIndex('users_domain').unique().on('users').column('domain').execute();
      await db.schema.createIndex('users_bot_owner').on('users').column('bot_owner_id').execute();

      await withId(db.schema.createTable('sessions'), 'session_id')
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('family_id', 'text', (c) => c.notNull())
        .addColumn('access_hash', 'text', (c) => c.notNull())
        .addColumn('refresh_hash', 'text')
        .addColumn('ip', 'text')
        .addColumn('is_bot', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('expires_at', big, (c) => c.notNull())
        .addColumn('created_at', big, (c) => c.notNull())
        .addColumn('revoked_at', big)
        .addColumn('refreshed_at', big)
        .execute();
      await db.schema.createIndex('sessions_access').unique().on('sessions').column('access_hash').execute();
      await db.schema.createIndex('sessions_refresh').unique().on('sessions').column('refresh_hash').execute();
      await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();
      await db.schema.createIndex('sessions_family').on('sessions').column('family_id').execute();

      await db.schema
        .createTable('totp_challenges')
        .addColumn('challenge_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('ip', 'text')
        .addColumn('expires_at', big, (c) => c.notNull())
        .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('used_at', big)
        .addColumn('created_at', big, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('collections')
        .addColumn('collection_id', big, (c) => c.primaryKey())
        .addColumn('title', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('qualities')
        .addColumn('quality_id', big, (c) => c.primaryKey())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('coeff_rent', 'double precision', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('item_types')
        .addColumn('type', big, (c) => c.primaryKey())
        .addColumn('title', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('item_protos')
        .addColumn('item_proto_id', big, (c) => c.primaryKey())
        .addColumn('type', big, (c) => c.notNull())
        .addColumn('quality_id', big, (c) => c.notNull().defaultTo(0))
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('image', 'text')
        .addColumn('collection_id', big)
        .addColumn('monopoly_id', big)
        .addColumn('sticker_group_id', big)
        .addColumn('prices', 'text')
        .addColumn('key_item_proto_id', big)
        .addColumn('case_item_proto_ids', 'text')
        .addColumn('drop_list', 'text')
        .addColumn('twin_item_proto_ids', 'text')
        .addColumn('can_craft', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('craft_result', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('item_proto_status', big)
        .addColumn('extra', 'text')
        .execute();
      await db.schema.createIndex('item_protos_type_quality').on('item_protos').columns(['type', 'quality_id']).execute();
      await db.schema.createIndex('item_protos_quality').on('item_protos').column('quality_id').execute();
      await db.schema.createIndex('item_protos_collection').on('item_protos').column('collection_id').execute();
      await db.schema.createIndex('item_protos_monopoly').on('item_protos').column('monopoly_id').execute();
      await db.schema.createIndex('item_protos_sticker_group').on('item_protos').column('sticker_group_id').execute();

      await withId(db.schema.createTable('items'), 'item_id')
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('item_proto_id', big, (c) => c.notNull())
        .addColumn('type', big, (c) => c.notNull())
        .addColumn('quality_id', big, (c) => c.notNull())
        .addColumn('ts_owned', big, (c) => c.notNull())
        .addColumn('ts_can_trade', big, (c) => c.notNull().defaultTo(0))
        .addColumn('state', 'text', (c) => c.notNull().defaultTo('owned'))
        .addColumn('ended_at', big)
        .addColumn('craft_id', big)
        .addColumn('created_by_craft_id', big)
        .addColumn('data', 'text')
        .execute();
      await db.schema.createIndex('items_by_time').on('items').columns(['user_id', 'state', 'ts_owned', 'item_id']).execute();
      await db.schema
        .createIndex('items_by_quality')
        .on('items')
        .columns(['user_id', 'state', 'quality_id', 'ts_owned', 'item_id'])
        .execute();
      await db.schema.createIndex('items_craft').on('items').column('craft_id').execute();
      await createInventoryCounts(db, dialect);

      await db.schema
        .createTable('equipped')
        .addColumn('item_id', big, (c) => c.primaryKey())
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('slot', 'text', (c) => c.notNull())
        .addColumn('game', 'text')
        .addColumn('monopoly_id', big)
        .execute();
      await db.schema.createIndex('equipped_user').on('equipped').column('user_id').execute();

      await withId(db.schema.createTable('crafts'), 'craft_id')
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('ts', big, (c) => c.notNull())
        .addColumn('result_item_id', big)
        .addColumn('consumed_item_ids', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('crafts_user').on('crafts').column('user_id').execute();

      await withId(db.schema.createTable('revocations'), 'revocation_id')
        .addColumn('item_id', big, (c) => c.notNull())
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('ts', big, (c) => c.notNull())
        .addColumn('reason', 'text')
        .execute();
      await db.schema.createIndex('revocations_item').unique().on('revocations').column('item_id').execute();

      await db.schema
        .createTable('friendships')
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('friend_id', big, (c) => c.notNull())
        .addColumn('since', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('friendships_pk', ['user_id', 'friend_id'])
        .execute();
      // friend_id completes the list order (since, friend_id): a page is read from the index, no sort.
      await db.schema.createIndex('friendships_by_age').on('friendships').columns(['user_id', 'since', 'friend_id']).execute();

      await db.schema
        .createTable('friend_requests')
        .addColumn('from_user_id', big, (c) => c.notNull())
        .addColumn('to_user_id', big, (c) => c.notNull())
        .addColumn('ts', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('friend_requests_pk', ['from_user_id', 'to_user_id'])
        .execute();
      await db.schema.createIndex('friend_requests_incoming').on('friend_requests').columns(['to_user_id', 'ts']).execute();

      await db.schema
        .createTable('blocks')
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('blocked_user_id', big, (c) => c.notNull())
        .addColumn('ts', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('blocks_pk', ['user_id', 'blocked_user_id'])
        .execute();
      await db.schema.createIndex('blocks_blocked').on('blocks').column('blocked_user_id').execute();

      await withId(db.schema.createTable('chat_messages'), 'msg_seq')
        .addColumn('msg_id', 'text', (c) => c.notNull())
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('ts', big, (c) => c.notNull())
        .addColumn('text', 'text')
        .addColumn('user_ids_mentioned', 'text')
        .addColumn('case_item_proto_id', big)
        .addColumn('drop_item_proto_id', big)
        .addColumn('user_id_receiver', big)
        .addColumn('item_proto_id', big)
        .addColumn('item_proto_ids', 'text')
        .addColumn('deleted_at', big)
        .execute();
      await db.schema.createIndex('chat_messages_msg_id').unique().on('chat_messages').column('msg_id').execute();

      await db.schema
        .createTable('chat_state')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('closed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('slowmode', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('emoteonly', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('slowmode_interval', 'integer', (c) => c.notNull().defaultTo(10))
        .execute();
      await db.insertInto('chat_state').values({ id: 1 }).execute();

      await withId(db.schema.createTable('audit_log'), 'audit_id')
        .addColumn('ts', big, (c) => c.notNull())
        .addColumn('key_fingerprint', 'text', (c) => c.notNull())
        .addColumn('ip', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('params', 'text', (c) => c.notNull())
        .addColumn('result_code', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_log_ts').on('audit_log').column('ts').execute();
      void sql;
    },
  };
}

/**
 * inventory_counts: how many items each user owns (and how many of them are stock class),
 * kept exact by triggers on every write to items, whoever makes it, so inventory.get can
 * answer its total without counting a large inventory.
 */
async function createInventoryCounts(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema
    .createTable('inventory_counts')
    .addColumn('user_id', 'bigint', (c) => c.primaryKey())
    .addColumn('owned', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('stock', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  if (dialect === 'postgres') {
    // Statement-level triggers with transition tables: one counter update per statement.
    await sql`
      create function items_count_changes() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into inventory_counts (user_id, owned, stock)
            select user_id, count(*), count(*) filter (where quality_id = 0) from new_items where state = 'owned' group by user_id
            on conflict (user_id) do update set owned = inventory_counts.owned + excluded.owned, stock = inventory_counts.stock + excluded.stock;
        elsif tg_op = 'DELETE' then
          update inventory_counts c set owned = c.owned - d.owned, stock = c.stock - d.stock
            from (select user_id, count(*) as owned, count(*) filter (where quality_id = 0) as stock from old_items where state = 'owned' group by user_id) d
            where c.user_id = d.user_id;
        else
          insert into inventory_counts (user_id, owned, stock)
            select user_id, sum(owned), sum(stock) from (
              select user_id, 1 as owned, case when quality_id = 0 then 1 else 0 end as stock from new_items where state = 'owned'
              union all
              select user_id, -1, case when quality_id = 0 then -1 else 0 end from old_items where state = 'owned'
            ) delta group by user_id having sum(owned) <> 0 or sum(stock) <> 0
            on conflict (user_id) do update set owned = inventory_counts.owned + excluded.owned, stock = inventory_counts.stock + excluded.stock;
        end if;
        return null;
      end $$`.execute(db);
    await sql`create trigger items_count_insert after insert on items referencing new table as new_items for each statement execute function items_count_changes()`.execute(
      db,
    );
    await sql`create trigger items_count_update after update on items referencing old table as old_items new table as new_items for each statement execute function items_count_changes()`.execute(
      db,
    );
    await sql`create trigger items_count_delete after delete on items referencing old table as old_items for each statement execute function items_count_changes()`.execute(
      db,
    );
    return;
  }
  const enter = (row: 'new') =>
    sql.raw(`
      insert or ignore into inventory_counts (user_id, owned, stock) values (${row}.user_id, 0, 0);
      update inventory_counts set owned = owned + 1, stock = stock + (${row}.quality_id = 0) where user_id = ${row}.user_id;`);
  const leave = (row: 'old') =>
    sql.raw(`
      update inventory_counts set owned = owned - 1, stock = stock - (${row}.quality_id = 0) where user_id = ${row}.user_id;`);
  await sql`create trigger items_count_insert after insert on items when new.state = 'owned' begin ${enter('new')} end`.execute(db);
  await sql`create trigger items_count_delete after delete on items when old.state = 'owned' begin ${leave('old')} end`.execute(db);
  await sql`create trigger items_count_leave after update of state, user_id, quality_id on items when old.state = 'owned' begin ${leave('old')} end`.execute(
    db,
  );
  await sql`create trigger items_count_enter after update of state, user_id, quality_id on items when new.state = 'owned' begin ${enter('new')} end`.execute(
    db,
  );
}
