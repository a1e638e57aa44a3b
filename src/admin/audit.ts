import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { nowSeconds } from '../services.js';
import { keyFingerprint } from '../api/admin-key.js';
import { Code } from '../api/errors.js';
import { hasValidClientAddress } from '../api/client-address.js';
import { constantTimeEqual } from '../infra/secrets.js';

/** Parameters never written to the audit log, whatever method they are sent to. */
const SECRET_PARAM = /password|secret|token|captcha|admin_key/i;
const MAX_LOGGED_STRING = 2000;

export interface AuditEntry {
  ts: number;
  keyFingerprint: string;
  ip: string;
  action: string;
  params: Record<string, unknown>;
  resultCode: number;
}

/** What a world file holds, by section, instead of the file itself (it carries password hashes). */
function summariseWorld(text: unknown): unknown {
  if (typeof text !== 'string') return '[omitted]';
  let world: unknown;
  try {
    world = JSON.parse(text);
  } catch {
    return { bytes: Buffer.byteLength(text), parsed: false };
  }
  if (world === null || typeof world !== 'object' || Array.isArray(world)) return { bytes: Buffer.byteLength(text), parsed: false };
  const sections: Record<string, number> = {};
  for (const [name, value] of Object.entries(world)) {
    if (Array.isArray(value)) sections[name] = value.length;
    else if (name === 'gchat' && value && typeof value === 'object' && Array.isArray((value as { messages?: unknown }).messages))
      sections['gchat.messages'] = (value as { messages: unknown[] }).messages.length;
  }
  return { bytes: Buffer.byteLength(text), sections };
}

/**
 * The parameters of an admin call as the audit log keeps them: secrets are replaced by a
 * marker (so the log shows that, say, a password was set, never the password), a world
 * file by a summary of its size and sections, and long values are cut short.
 */
export function auditParams(raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (SECRET_PARAM.test(name)) out[name] = '[redacted]';
    else if (name === 'world') out[name] = summariseWorld(value);
    else out[name] = shorten(value);
  }
  return out;
}

function shorten(value: unknown): unknown {
  if (typeof value === 'string') return value.length > MAX_LOGGED_STRING ? `${value.slice(0, MAX_LOGGED_STRING)}...` : value;
  if (value === null || typeof value !== 'object') return value;
  const text = JSON.stringify(value);
  return text.length > MAX_LOGGED_STRING ? `${text.slice(0, MAX_LOGGED_STRING)}...` : value;
}

/**
 * Whether a request carried the configured admin key. The transport has already checked it
 * (and answered 1, 4 or 7 when it did not match); this tells the audit hook which answered
 * calls were authorised ones.
 */
function carriesAdminKey(services: Services, request: FastifyRequest): boolean {
  const configured = services.config.adminKey;
  const presented = request.headers['x-admin-key'];
  return Boolean(configured) && typeof presented === 'string' && presented !== '' && constantTimeEqual(presented, configured!);
}

/** The result code of a serialised envelope (`{"code":N,...}` always starts with the code). */
function envelopeCode(payload: unknown): number | undefined {
  if (typeof payload !== 'string') return undefined;
  const match = /^\{"code":(\d+)/.exec(payload);
  return match ? Number(match[1]) : undefined;
}

/** The result code of an entry whose call has not been answered (yet, or ever: the process stopped). */
export const RESULT_PENDING = -1;
/** Entries still pending after this many seconds are listed: their call was cut short and its outcome is unknown. */
export const PENDING_SHOWN_AFTER = 60;

const AUDIT_ID = Symbol('auditId');
type Audited = FastifyRequest & { [AUDIT_ID]?: number };

/**
 * Writes the entry of an authorised admin call before the call runs, as pending. When it
 * cannot be written the call fails (code 3) and nothing is done: no action without its
 * entry. Only the result code is filled in afterwards.
 */
async function recordIntent(services: Services, request: FastifyRequest, action: string): Promise<number> {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const body = request.body !== null && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
  const row = await services.db.kysely
    .insertInto('audit_log')
    .values({
      ts: nowSeconds(services),
      key_fingerprint: keyFingerprint(services.config.adminKey!),
      ip: request.ip,
      action,
      params: JSON.stringify(auditParams({ ...query, ...body })),
      result_code: RESULT_PENDING,
    })
    .returning('audit_id')
    .executeTakeFirstOrThrow();
  return Number(row.audit_id);
}

/** Fills in the result code of a call's entry; a call refused by a request limit (7) was no action and its entry goes. */
async function recordOutcome(services: Services, request: FastifyRequest, auditId: number, resultCode: number): Promise<void> {
  try {
    if (resultCode === Code.RATE_LIMIT) await services.db.kysely.deleteFrom('audit_log').where('audit_id', '=', auditId).execute();
    else await services.db.kysely.updateTable('audit_log').set({ result_code: resultCode }).where('audit_id', '=', auditId).execute();
  } catch (error) {
    // The entry stays, pending: the action is on record, its outcome is not.
    request.log.error({ err: error, auditId, reqId: request.id }, 'could not record the outcome of an admin call in the audit log');
  }
}

/**
 * Records every authorised admin call, success or failure: its entry is written before the
 * call runs and completed with the result code once the answer is ready, before it is sent
 * (a client that has its answer can read the entry). Calls refused before authorisation (no
 * key configured, wrong key, a client address that is not one) are not actions and are not
 * recorded; a call that fails after authorisation (bad parameters included) is.
 */
export function registerAuditHook(app: FastifyInstance, services: Services, methodNames: Set<string>): void {
  const audited = (request: FastifyRequest): string | undefined => {
    const action = (request.params as { method?: string } | undefined)?.method;
    if (action === undefined || !methodNames.has(action) || request.routeOptions.url !== '/api/:method') return undefined;
    return action;
  };
  app.addHook('preHandler', (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    const action = audited(request);
    if (action === undefined || !carriesAdminKey(services, request) || !hasValidClientAddress(request.ip)) return done();
    recordIntent(services, request, action).then(
      (auditId) => {
        (request as Audited)[AUDIT_ID] = auditId;
        done();
      },
      (error: Error) => done(error),
    );
  });
  // A plain callback that returns at once for every other call: it runs on every request.
  app.addHook(
    'onSend',
    (request: FastifyRequest, _reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
      const auditId = (request as Audited)[AUDIT_ID];
      if (auditId === undefined) return done(null, payload);
      const code = envelopeCode(payload) ?? Code.INTERNAL;
      void recordOutcome(services, request, auditId, code).finally(() => done(null, payload));
    },
  );
}
