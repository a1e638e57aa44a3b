// The statements of the transport itself: the audit log of admin calls (audit.ts).
import type { Insertable } from 'kysely';
import type { Executor } from '../db/connection.js';
import type { AuditLogTable } from '../db/tables.js';

/** Records one admin call in the audit log. */
export async function insertAuditEntry(executor: Executor, entry: Insertable<AuditLogTable>): Promise<void> {
  await executor.insertInto('audit_log').values(entry).execute();
}
