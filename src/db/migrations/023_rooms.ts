import type { Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * The lobby: rooms (their settings, a version the realtime patches carry, and once started the
 * game they became), room_members (the players waiting in a room: one room per player, by the
 * primary key), room_invites and room_bans (the users kicked from a room).
 */
export function roomsMigration(dialect: DialectName) {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const big = 'bigint' as const;
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('rooms')
        .addColumn('room_id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('status', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('admin_id', big, (c) => c.notNull())
        .addColumn('game_submode', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('maxplayers', 'integer', (c) => c.notNull())
        .addColumn('private', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('autostart', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('game_timers', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('br_corner', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('v', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('ts_created', big, (c) => c.notNull())
        .addColumn('players', 'text')
        .addColumn('game_id', big)
        .addColumn('gs_id', 'text')
        .execute();
      await db.schema.createIndex('rooms_status').on('rooms').columns(['status', 'room_id']).execute();
      await db.schema
        .createTable('room_members')
        .addColumn('user_id', big, (c) => c.primaryKey())
        .addColumn('room_id', big, (c) => c.notNull())
        .addColumn('seat', 'integer', (c) => c.notNull())
        .addColumn('ts_joined', big, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('room_members_room').on('room_members').columns(['room_id', 'seat']).execute();
      await db.schema
        .createTable('room_invites')
        .addColumn('room_id', big, (c) => c.notNull())
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('inviter_id', big, (c) => c.notNull())
        .addColumn('ts', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('room_invites_pk', ['room_id', 'user_id'])
        .execute();
      await db.schema.createIndex('room_invites_user').on('room_invites').column('user_id').execute();
      await db.schema
        .createTable('room_bans')
        .addColumn('room_id', big, (c) => c.notNull())
        .addColumn('user_id', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('room_bans_pk', ['room_id', 'user_id'])
        .execute();
    },
  };
}
