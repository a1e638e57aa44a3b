import type { FastifyBaseLogger } from 'fastify';
import type { Services } from '../services.js';
import { ApiError, Code, authError, badParam, rateLimited } from './errors.js';
import {
  SerializedData,
  SerializedList,
  StreamedData,
  type AdminContext,
  type AnyMethod,
  type CallContext,
  type Caller,
} from './method.js';
import { checkAdminKey } from './admin-key.js';
import { ANSWER_BYTES_PER_REQUEST, CostlyAnswers, addressLimitKey, type AnswerCharge } from './address-limits.js';
import { runAudited } from './audit.js';
import { tokenParameterProblem } from './bearer.js';
import { SCOPE_BITS } from './oauth-scopes.js';

/** One call of a method, whatever carried it (an HTTP request, a WebSocket emit). */
export interface Invocation {
  /** The method's name as asked (unknown names answer 5). */
  name: string;
  /** Parameters as sent, before coercion. */
  raw: Record<string, unknown>;
  ip: string;
  userAgent?: string;
  requestId: string;
  log: FastifyBaseLogger;
  /** The access token the call presents, read from `raw` when the carrier needs it. */
  token: (raw: Record<string, unknown>) => string | undefined;
  /** The X-Admin-Key value presented (admin methods only). */
  adminKey?: string | string[];
}

/**
 * Runs methods by name: the request limits, authentication, the bot allow-list, presence,
 * parameter coercion and the handler. Both the HTTP transport and the realtime feed's `api`
 * emit call it, so a method answers the same over either.
 */
export class MethodDispatcher {
  private readonly byName: Map<string, AnyMethod>;
  private readonly costlyAnswers: CostlyAnswers;

  constructor(
    private readonly services: Services,
    methods: AnyMethod[],
  ) {
    this.byName = new Map(methods.map((m) => [m.name, m]));
    this.costlyAnswers = new CostlyAnswers(services);
  }

  /** Whether a method of this name exists. */
  knows(name: string): boolean {
    return this.byName.has(name);
  }

  private async limit(key: string, rule: { max: number; windowSeconds: number }): Promise<void> {
    const hit = await this.services.counters.hit(key, rule.windowSeconds);
    if (hit.count > rule.max) throw rateLimited(hit.resetIn);
  }

  /**
   * The method called, its handler's answer, and for a costly answer what it was charged up
   * front (to settle once the answer is sent). Throws ApiError for every refused call.
   */
  async invoke(call: Invocation): Promise<{ method: AnyMethod; answer: unknown; charge?: AnswerCharge }> {
    const { services } = this;
    const { config } = services;
    const { ip, raw } = call;
    const method = this.byName.get(call.name);
    const token = method && method.auth !== 'none' && method.auth !== 'admin' ? call.token(raw) : undefined;
    // A token whose session this process holds is resolved before the limits (no database
    // read), so that its address and its token are counted in one step.
    const cached = config.rateLimit && token !== undefined ? services.tokens.resolveCached(token, ip) : undefined;
    const countedToken = cached && !refusesBot(method!, cached.caller) ? tokenLimitKey(cached.caller) : undefined;
    if (config.rateLimit) {
      // Every call counts against its address, unknown methods included; its token only while the address has room.
      const limits = [{ key: addressLimitKey(services, ip), ...config.rateLimitPerIp }];
      if (countedToken) limits.push({ key: countedToken, ...config.rateLimitPerToken });
      const over = await services.counters.hitLimits(limits);
      if (over) throw rateLimited(over.resetIn);
    }
    if (!method) throw new ApiError(Code.UNKNOWN_METHOD, `unknown method ${call.name.slice(0, 100)}`);

    const ctx: CallContext = { services, ip, userAgent: call.userAgent, requestId: call.requestId, log: call.log };
    if (method.auth === 'admin') {
      const keyFingerprint = await checkAdminKey(services, call.adminKey, ip);
      const audited = { action: method.name, keyFingerprint, ip, params: raw, requestId: call.requestId, log: call.log };
      const answer = await runAudited(services, audited, (inTransaction) => {
        const adminCtx: AdminContext = { ...ctx, inTransaction };
        return method.run(adminCtx, raw);
      });
      return { method, answer };
    }
    if (method.auth !== 'none') {
      const tokenProblem = tokenParameterProblem(raw.access_token);
      if (tokenProblem) throw badParam('access_token', tokenProblem);
      if (token !== undefined) {
        const resolved =
          cached !== undefined
            ? cached
            : config.rateLimit
              ? await services.tokens.resolveStored(token, ip)
              : await services.tokens.resolveSession(token, ip);
        const caller = resolved?.caller;
        if (!caller) throw authError();
        ctx.caller = caller;
        ctx.accessToken = token;
      } else if (method.auth === 'required') {
        throw authError('authorization required: send an access_token');
      }
      if (ctx.caller) {
        if (refusesBot(method, ctx.caller)) throw new ApiError(Code.FORBIDDEN, 'bots may not call this method');
        if (refusesApp(method, ctx.caller)) throw new ApiError(Code.FORBIDDEN, appRefusal(method));
        if (config.rateLimit && !countedToken) await this.limit(tokenLimitKey(ctx.caller), config.rateLimitPerToken);
        services.presence.touch(ctx.caller.userId);
      }
    }

    const params = method.readParams(raw);
    const estimate = config.rateLimit && method.answerBytes ? await method.answerBytes(ctx, params) : 0;
    const charge = estimate >= ANSWER_BYTES_PER_REQUEST ? await this.costlyAnswers.charge(ip, estimate, call.log) : undefined;
    if (!charge) return { method, answer: await method.runWith(ctx, params) };
    try {
      return { method, answer: await method.runWith(ctx, params), charge };
    } catch (error) {
      charge.settle(0);
      throw error;
    }
  }
}

/** The counter of a session's requests. */
function tokenLimitKey(caller: Caller): string {
  return `rl:token:${caller.sessionId}`;
}

/** Bots call only the signed-in methods that allow them. */
function refusesBot(method: AnyMethod, caller: Caller): boolean {
  return caller.isBot && method.auth === 'required' && !method.bots;
}

/**
 * A session an app obtained through OAuth calls the methods its scopes open, and those without a
 * scope where a token stands for "me" (auth optional: users.get, inventory.get, ...).
 */
function refusesApp(method: AnyMethod, caller: Caller): boolean {
  if (caller.scopes === undefined) return false;
  if (method.scope !== undefined) return (caller.scopes & SCOPE_BITS[method.scope]) === 0;
  return method.auth === 'required';
}

function appRefusal(method: AnyMethod): string {
  return method.scope === undefined
    ? 'the app was not granted access to this method'
    : `the app was not granted the ${method.scope} scope this method needs`;
}

/** A handler's result as the JSON text of `data` (undefined for a method without a result). */
export function resultJson(data: unknown): string | undefined {
  if (data === undefined) return undefined;
  if (data instanceof SerializedData) return data.json;
  if (data instanceof SerializedList) return `${data.open}${data.elements.join(',')}${data.close}`;
  if (data instanceof StreamedData)
    return Array.from(data.pieces(), (piece) => (typeof piece === 'string' ? piece : piece.toString('utf8'))).join('');
  return JSON.stringify(data);
}
