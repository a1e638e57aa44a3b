import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * The audit log names what each admin call acted on (`target`: `user:2`, `item:17`,
 * `message:…`, `promocode:SPRING`, …) so that it can be filtered by it, newest first, through
 * one index. Entries written before carry the user they acted on when their parameters name
 * one by a plain id; the others have none.
 */
export function auditTargetMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('audit_log').addColumn('target', 'text').execute();
      if (dialect === 'postgres')
        await sql`update audit_log set target = 'user:' || (params::jsonb ->> 'user_id')
          where jsonb_typeof(params::jsonb) = 'object' and (params::jsonb ->> 'user_id') ~ '^[1-9][0-9]{0,15}$'`.execute(db);
      else
        await sql`update audit_log set target = 'user:' || json_extract(params, '$.user_id')
          where json_valid(params) and cast(json_extract(params, '$.user_id') as text) glob '[1-9]*'
            and cast(json_extract(params, '$.user_id') as text) not glob '*[^0-9]*'
            and length(cast(json_extract(params, '$.user_id') as text)) <= 16`.execute(db);
      await db.schema.createIndex('audit_log_target').on('audit_log').columns(['target', 'audit_id']).execute();
    },
  };
}
