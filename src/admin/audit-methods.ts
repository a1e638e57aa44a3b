import { Type } from '@sinclair/typebox';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict, Uint } from '../api/schema-types.js';
import type { ExpressionBuilder } from 'kysely';
import type { Tables } from '../db/tables.js';
import { nowSeconds } from '../services.js';
import { PENDING_SHOWN_AFTER, RESULT_PENDING } from './audit.js';
import { AuditEntrySchema } from './schemas.js';

export const MAX_AUDIT_PAGE = 100;

export const auditMethods: AnyMethod[] = [
  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.auditLog',
    summary: 'Read the audit log of admin actions, newest first',
    description:
      'Every authorised admin call is recorded, success or failure: when, by which key (fingerprint), from which address, the method, its parameters (passwords and other secrets replaced by "[redacted]", world files by a summary) and the result code. The entry is written before the call runs (a call whose entry cannot be written fails with code 3 and does nothing); an entry whose call was cut short by a stopping process keeps result_code -1 (outcome unknown) and is listed a minute after it was written.',
    params: P.object({
      offset: P.uint({ default: 0, description: 'entries to skip, newest first' }),
      count: P.uint({ default: 20, tooMany: MAX_AUDIT_PAGE, description: 'entries to return' }),
      action: P.optional(P.string({ maxLength: 100, description: 'only entries of this method, e.g. admin.banUser' })),
    }),
    result: Type.Object({ count: Uint, entries: Type.Array(AuditEntrySchema) }, Strict),
    handler: async ({ services }, params) => {
      const k = services.db.kysely;
      // Calls still running (this one included) are not listed yet; entries left pending by a process that stopped are.
      const settled = (eb: ExpressionBuilder<Tables, 'audit_log'>) =>
        eb.or([eb('result_code', '<>', RESULT_PENDING), eb('ts', '<', nowSeconds(services) - PENDING_SHOWN_AFTER)]);
      let rows = k.selectFrom('audit_log').selectAll().where(settled);
      let total = k
        .selectFrom('audit_log')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where(settled);
      if (params.action !== undefined) {
        rows = rows.where('action', '=', params.action);
        total = total.where('action', '=', params.action);
      }
      const [entries, counted] = await Promise.all([
        rows.orderBy('audit_id', 'desc').offset(params.offset).limit(params.count).execute(),
        total.executeTakeFirstOrThrow(),
      ]);
      return {
        count: Number(counted.n),
        entries: entries.map((e) => ({
          audit_id: e.audit_id,
          ts: e.ts,
          key_fingerprint: e.key_fingerprint,
          ip: e.ip,
          action: e.action,
          params: JSON.parse(e.params) as Record<string, unknown>,
          result_code: e.result_code,
        })),
      };
    },
  }),
];
