import { Type } from '@sinclair/typebox';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { badParam } from '../api/errors.js';
import { Strict, Uint } from '../api/schema-types.js';
import { AuditEntrySchema } from './schemas.js';
import { auditPage } from './queries.js';

export const MAX_AUDIT_PAGE = 100;
/** A target as entries carry it: a kind, a colon, an id. */
const TARGET_FORM = /^[a-z]+:\S.*$/;

export const auditMethods: AnyMethod[] = [
  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.auditLog',
    summary: 'Read the audit log of admin actions, newest first',
    description:
      'Every authorised admin call is recorded, success or failure: when, by which key (fingerprint), from which address, the method, its parameters (passwords and other secrets replaced by "[redacted]", world files by a summary) and the code it answered. An action and its entry commit together in one transaction: a call answers only once its entry is stored, and a call whose entry cannot be stored answers 3 and changes nothing. A failed call (bad parameters included) is recorded with its code after its writes were undone. Each entry names what the call acted on (`target`); `action` and `target` filter, together when both are given.',
    params: P.object({
      offset: P.uint({ default: 0, description: 'entries to skip, newest first' }),
      count: P.uint({ default: 20, tooMany: MAX_AUDIT_PAGE, description: 'entries to return' }),
      action: P.optional(P.string({ maxLength: 100, description: 'only entries of this method, e.g. admin.banUser' })),
      target: P.optional(
        P.string({
          maxLength: 120,
          description: 'only entries of calls that acted on this, `<kind>:<id>` as entries show it, e.g. `user:2` or `item:17`',
        }),
      ),
    }),
    result: Type.Object({ count: Uint, entries: Type.Array(AuditEntrySchema) }, Strict),
    handler: async ({ services }, params) => {
      if (params.target !== undefined && !TARGET_FORM.test(params.target))
        throw badParam('target', 'must be <kind>:<id>, e.g. user:2 or item:17');
      const { total, entries } = await auditPage(services.db.kysely, params);
      return {
        count: total,
        entries: entries.map((e) => ({
          audit_id: e.audit_id,
          ts: e.ts,
          key_fingerprint: e.key_fingerprint,
          ip: e.ip,
          action: e.action,
          params: JSON.parse(e.params) as Record<string, unknown>,
          result_code: e.result_code,
          ...(e.target !== null ? { target: e.target } : {}),
        })),
      };
    },
  }),
];
