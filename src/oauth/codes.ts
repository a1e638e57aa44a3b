import { createHash, randomUUID } from 'node:crypto';
import { ApiError, Code } from '../api/errors.js';
import { constantTimeEqual, newToken, sha256 } from '../infra/secrets.js';
import { issueUserSessionIn, revokeFamily, type SessionData } from '../auth/index.js';
import { nowSeconds, type Services } from '../services.js';
import { redirectUriProblem } from './redirect-uris.js';
import { appById, codeForUpdate, deleteCodesBefore, insertCode, markCodeUsed } from './queries.js';
import { OFFLINE } from './scopes.js';

/** Seconds an authorization code may be exchanged after the dialog gave it. */
export const CODE_LIFETIME = 60;
const USED_CODES_KEPT = 3600;

/** PKCE (RFC 7636): a verifier is 43 to 128 of these characters; its S256 challenge is 43 base64url characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
export const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export interface CodeGrant {
  appId: number;
  userId: number;
  redirectUri: string;
  scopes: number;
  /** The S256 PKCE challenge the app sent to the dialog, if any. */
  codeChallenge?: string;
}

/** A new authorization code for a grant the player just made: stored as its SHA-256, good once within CODE_LIFETIME. */
export async function issueCode(services: Services, grant: CodeGrant): Promise<string> {
  const code = newToken();
  // Codes are kept an hour past their end, so that a late second use is still refused as one.
  await deleteCodesBefore(services.db.kysely, nowSeconds(services) - USED_CODES_KEPT);
  await insertCode(services.db.kysely, {
    code_hash: sha256(code),
    app_id: grant.appId,
    user_id: grant.userId,
    redirect_uri: grant.redirectUri,
    scopes: grant.scopes,
    code_challenge: grant.codeChallenge ?? null,
    expires_at: nowSeconds(services) + CODE_LIFETIME,
  });
  return code;
}

function pkceMatches(verifier: string | undefined, challenge: string): boolean {
  if (verifier === undefined || !VERIFIER.test(verifier)) return false;
  return constantTimeEqual(createHash('sha256').update(verifier).digest('base64url'), challenge);
}

export interface Exchange {
  appId: number;
  appSecret: string;
  code: string;
  redirectUri: string;
  codeVerifier?: string;
  ip: string;
  userAgent?: string;
}

const BAD_CODE = 'the code is unknown, used or expired';

type Outcome =
  | { kind: 'issued'; session: SessionData }
  | { kind: 'reused'; familyId: string | null }
  | { kind: 'refused'; code: number; description: string };

/**
 * oauth.exchangeCode: the code's session, with the scopes the player granted and a refresh
 * token only with `offline`. A code works once: presented again, it revokes the session its
 * first use issued (it was in two hands, RFC 9700, 4.4.1.1). Concurrent exchanges of one code
 * are serialised by the code's row lock (SQLite: by its one write transaction).
 */
export async function exchangeCode(services: Services, exchange: Exchange): Promise<SessionData> {
  const { kysely, dialect } = services.db;
  const app = await appById(kysely, exchange.appId);
  if (!app) throw new ApiError(Code.OAUTH_NO_SUCH_APP, 'no such app');
  if (app.active !== 1) throw new ApiError(Code.OAUTH_APP_INACTIVE, 'the app is disabled');
  // A public client has no secret: whatever it sends is not looked at; PKCE proves it instead. A
  // confidential one imported from a world file has none until the admin issues one: nothing matches.
  if (app.public_client !== 1 && (app.secret_hash === null || !constantTimeEqual(sha256(exchange.appSecret), app.secret_hash)))
    throw new ApiError(Code.OAUTH_BAD_SECRET, 'wrong app secret');
  const problem = redirectUriProblem(exchange.redirectUri);
  if (problem) throw new ApiError(Code.OAUTH_BAD_REDIRECT_URI, `redirect_uri is not valid: ${problem}`, { details: problem });

  const codeHash = sha256(exchange.code);
  const now = nowSeconds(services);
  const refused = (code: number, description: string): Outcome => ({ kind: 'refused', code, description });
  const outcome = await kysely.transaction().execute(async (trx): Promise<Outcome> => {
    const code = await codeForUpdate(trx, codeHash, dialect === 'postgres');
    if (!code || code.app_id !== app.app_id) return refused(Code.OAUTH_BAD_CODE, BAD_CODE);
    if (code.used_at !== null) return { kind: 'reused', familyId: code.family_id };
    if (code.expires_at <= now) return refused(Code.OAUTH_BAD_CODE, BAD_CODE);
    if (code.redirect_uri !== exchange.redirectUri)
      return refused(Code.OAUTH_REDIRECT_MISMATCH, 'redirect_uri is not the one the dialog was given');
    // With a challenge the verifier must match it; without one a verifier is refused (RFC 9700, 2.1.1).
    if (code.code_challenge === null ? exchange.codeVerifier !== undefined : !pkceMatches(exchange.codeVerifier, code.code_challenge))
      return refused(Code.OAUTH_BAD_CODE, `${BAD_CODE}, or code_verifier does not match its challenge`);
    const familyId = randomUUID();
    const grant = { appId: app.app_id, scopes: code.scopes, offline: (code.scopes & OFFLINE) !== 0 };
    const session = await issueUserSessionIn(services, trx, code.user_id, exchange.ip, familyId, exchange.userAgent, grant);
    await markCodeUsed(trx, codeHash, now, familyId);
    return { kind: 'issued', session };
  });
  switch (outcome.kind) {
    case 'issued':
      return outcome.session;
    case 'reused':
      if (outcome.familyId !== null) await revokeFamily(services, outcome.familyId);
      throw new ApiError(Code.OAUTH_BAD_CODE, 'the code was already used: the session it gave is revoked');
    case 'refused':
      throw new ApiError(outcome.code, outcome.description);
  }
}
