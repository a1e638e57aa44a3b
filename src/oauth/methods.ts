import { defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Session } from '../auth/index.js';
import { CODE_LIFETIME, exchangeCode } from './codes.js';

export const oauthExchangeCode = defineMethod({
  name: 'oauth.exchangeCode',
  summary: 'Exchange the code of the OAuth dialog for a session',
  description:
    `The app's server exchanges the \`code\` the dialog (\`/oauth\`) redirected with, within ${CODE_LIFETIME} s, for a Session ` +
    'of the player that carries only the scopes they allowed: without `offline` (1) it has no refresh token, and methods ' +
    'those scopes do not open answer 4 (a session of an app calls only the methods where a token stands for its player, ' +
    'such as users.get and inventory.get without user_id). The access token is bound to the address that exchanged the code. ' +
    'A code works once; exchanged again it answers 2001 and revokes the session its first exchange gave. A public client ' +
    '(no secret: `app_secret` is not looked at) must have sent a PKCE `code_challenge` (S256) to the dialog and sends its ' +
    '`code_verifier` here; a confidential client may.',
  auth: 'none',
  params: P.object({
    app_id: P.uint({ description: 'the app' }),
    app_secret: P.string({ maxLength: 512, description: 'the secret admin.createApp answered (anything for a public client)' }),
    code: P.string({ maxLength: 512, description: 'the `code` the dialog redirected with' }),
    redirect_uri: P.string({ maxLength: 4096, description: 'the redirect_uri given to the dialog, exactly' }),
    code_verifier: P.optional(P.string({ maxLength: 256, description: 'PKCE: the verifier of the code_challenge given to the dialog' })),
  }),
  result: Session,
  errors: {
    412: 'the account is globally blocked',
    2001: 'the code is unknown, expired, already used (the session of its first use is then revoked), of another app, or its PKCE verifier is missing or wrong',
    2002: 'redirect_uri is not the one given to the dialog',
    2003: 'wrong app secret',
    2004: 'no such app',
    2005: 'the app is disabled',
    2007: 'redirect_uri is not a valid address; data.details says why',
  },
  handler: async (ctx, params) =>
    exchangeCode(ctx.services, {
      appId: params.app_id,
      appSecret: params.app_secret,
      code: params.code,
      redirectUri: params.redirect_uri,
      codeVerifier: params.code_verifier,
      ip: ctx.ip,
      userAgent: ctx.userAgent,
    }),
});
