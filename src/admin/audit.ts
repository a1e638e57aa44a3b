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

export async function writeAuditEntry(services: Services, entry: AuditEntry): Promise<void> {
  await services.db.kysely
    .insertInto('audit_log')
    .values({
      ts: entry.ts,
      key_fingerprint: entry.keyFingerprint,
      ip: entry.ip,
      action: entry.action,
      params: JSON.stringify(entry.params),
      result_code: entry.resultCode,
    })
    .execute();
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

/** Writes the audit entry of an authorised admin call; never fails (the action has already happened). */
async function recordCall(services: Services, request: FastifyRequest, action: string, resultCode: number): Promise<void> {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const body = request.body !== null && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
  try {
    await writeAuditEntry(services, {
      ts: nowSeconds(services),
      keyFingerprint: keyFingerprint(services.config.adminKey!),
      ip: request.ip,
      action,
      params: auditParams({ ...query, ...body }),
      resultCode,
    });
  } catch (error) {
    // Losing the record must not turn the action's answer into an error.
    request.log.error({ err: error, action, reqId: request.id }, 'could not write the audit log');
  }
}

/**
 * Records every authorised admin call, success or failure, once its answer is ready and
 * before it is sent: a client that has its answer can already read the entry. Calls refused
 * before authorisation (no key configured, wrong key, rate limited) are not actions and are
 * not recorded; a call that fails after authorisation (bad parameters included) is.
 */
export function registerAuditHook(app: FastifyInstance, services: Services, methodNames: Set<string>): void {
  // A plain callback that returns at once for every other call: it runs on every request.
  app.addHook('onSend', (request: FastifyRequest, _reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
    const action = (request.params as { method?: string } | undefined)?.method;
    if (action === undefined || !methodNames.has(action) || request.routeOptions.url !== '/api/:method') return done(null, payload);
    const code = envelopeCode(payload);
    if (code === undefined || code === Code.RATE_LIMIT || !carriesAdminKey(services, request) || !hasValidClientAddress(request.ip))
      return done(null, payload);
    void recordCall(services, request, action, code).finally(() => done(null, payload));
  });
}
