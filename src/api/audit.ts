import type { FastifyBaseLogger } from 'fastify';
import type { Services } from '../services.js';
import { nowSeconds } from '../services.js';
import type { Executor, InTransaction } from '../db/connection.js';
import { insertAuditEntry } from './queries.js';
import { isSecretName } from '../infra/redact.js';
import { ApiError, Code } from './errors.js';
import { MAX_PARAM_DEPTH } from './depth.js';

const REDACTED = '[redacted]';
const MAX_LOGGED_STRING = 2000;

/** An authorised admin call as its audit entry records it. */
export interface AuditedCall {
  action: string;
  /** Fingerprint of the admin key that authorised the call. */
  keyFingerprint: string;
  ip: string;
  /** The parameters as sent, before coercion. */
  params: Record<string, unknown>;
  requestId: string;
  log: FastifyBaseLogger;
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

/** `value` with the value of every secret-named key in it replaced, `depth` levels of objects and arrays down. */
function withoutSecrets(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_PARAM_DEPTH) return '[omitted]';
  if (Array.isArray(value)) return value.map((element) => withoutSecrets(element, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([name, inner]) => [name, isSecretName(name) ? REDACTED : withoutSecrets(inner, depth + 1)]),
  );
}

function shorten(value: unknown): unknown {
  if (typeof value === 'string') return value.length > MAX_LOGGED_STRING ? `${value.slice(0, MAX_LOGGED_STRING)}...` : value;
  if (value === null || typeof value !== 'object') return value;
  const text = JSON.stringify(value);
  return text.length > MAX_LOGGED_STRING ? `${text.slice(0, MAX_LOGGED_STRING)}...` : value;
}

/**
 * The parameters of an admin call as the audit log keeps them: secrets, at any depth, are
 * replaced by a marker (so the log shows that, say, a password was set, never the password),
 * a world file by a summary of its size and sections, and long values are cut short.
 */
export function auditParams(raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (name === 'world') out[name] = summariseWorld(value);
    else if (isSecretName(name)) out[name] = REDACTED;
    else out[name] = shorten(withoutSecrets(value, 1));
  }
  return out;
}

/**
 * The parameters that name what an admin call acts on, most telling first, with the kind the
 * audit log's `target` gives it: `user:2`, `item:17`, `message:abc`, `app:3`, …. A promo code is
 * a secret (see infra/redact.ts), so it is never a target.
 */
const TARGET_PARAMS: [name: string, kind: string][] = [
  ['user_id', 'user'],
  ['item_id', 'item'],
  ['thing_id', 'item'],
  ['trade_id', 'trade'],
  ['listing_id', 'listing'],
  ['msg_id', 'message'],
  ['app_id', 'app'],
  ['item_proto_id', 'proto'],
  ['case_item_proto_id', 'proto'],
  ['collection_id', 'collection'],
];
/** Longest id a target keeps; longer values name nothing a call could act on. */
const MAX_TARGET_ID = 100;

/** What an admin call acts on, `<kind>:<id>`, from its parameters as sent; undefined when they name nothing. */
export function auditTarget(raw: Record<string, unknown>): string | undefined {
  for (const [name, kind] of TARGET_PARAMS) {
    const value = raw[name];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return `${kind}:${value}`;
    if (typeof value !== 'string') continue;
    const text = value.trim();
    if (text === '' || text.length > MAX_TARGET_ID) continue;
    // Ids sent as text (a query string, a form) are the same target as the number.
    return `${kind}:${/^\d{1,15}$/.test(text) ? String(Number(text)) : text}`;
  }
  return undefined;
}

/** The code a call answers when `error` ends it. */
function answeredCode(error: unknown): number {
  return error instanceof ApiError ? error.code : Code.INTERNAL;
}

/**
 * The audit entry of one authorised admin call, and the one transaction its action may write
 * in. An action that writes the database does so through `inTransaction`: the entry (with
 * code 0) is the first row that transaction writes, so the action's writes and its entry
 * commit together or not at all. An action that does not write the database has its entry
 * written in a transaction of its own once it has succeeded, before it answers.
 */
class AuditedAction {
  private state: 'idle' | 'open' | 'committed' = 'idle';

  constructor(
    private readonly services: Services,
    private readonly call: AuditedCall,
  ) {}

  get committed(): boolean {
    return this.state === 'committed';
  }

  readonly inTransaction: InTransaction = async (work) => {
    if (this.state !== 'idle') throw new Error(`${this.call.action} asked for a second transaction: an admin action writes in one`);
    this.state = 'open';
    try {
      const result = await this.services.db.kysely.transaction().execute(async (trx) => {
        await this.write(trx, Code.OK);
        return work(trx);
      });
      this.state = 'committed';
      return result;
    } finally {
      if (this.state === 'open') this.state = 'idle';
    }
  };

  async write(executor: Executor, resultCode: number): Promise<void> {
    const { services, call } = this;
    await insertAuditEntry(executor, {
      ts: nowSeconds(services),
      key_fingerprint: call.keyFingerprint,
      ip: call.ip,
      action: call.action,
      params: JSON.stringify(auditParams(call.params)),
      result_code: resultCode,
      target: auditTarget(call.params) ?? null,
    });
  }
}

/**
 * Runs an authorised admin call so that it answers only once its audit entry is stored: a
 * success with code 0 (in the action's own transaction when it writes), a failure (bad
 * parameters included) with the code it answers, after its writes were rolled back. A call
 * whose entry cannot be stored answers 3 having committed nothing, and is recorded with 3
 * when that entry can be.
 */
export async function runAudited<T>(
  services: Services,
  call: AuditedCall,
  action: (inTransaction: InTransaction) => Promise<T>,
): Promise<T> {
  const audited = new AuditedAction(services, call);
  try {
    const result = await action(audited.inTransaction);
    if (!audited.committed) await audited.write(services.db.kysely, Code.OK);
    return result;
  } catch (error) {
    if (audited.committed) {
      // The writes stand, on record with code 0; only a step after them failed.
      call.log.error({ err: error, reqId: call.requestId }, `${call.action} failed after its writes were committed`);
      throw error;
    }
    try {
      await audited.write(services.db.kysely, answeredCode(error));
    } catch (auditError) {
      call.log.error({ err: auditError, reqId: call.requestId, answer: answeredCode(error) }, 'could not record a failed admin call');
      throw auditError;
    }
    throw error;
  }
}
