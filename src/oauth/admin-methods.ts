import { Type } from '@sinclair/typebox';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict } from '../api/schema-types.js';
import { MAX_APP_NAME_LENGTH, createApp, listApps, updateApp } from './apps.js';
import { MAX_REDIRECT_URIS, MAX_REDIRECT_URI_LENGTH } from './redirect-uris.js';
import { AppSchema } from './schemas.js';
import { ALL_SCOPES } from './scopes.js';

const NO_SUCH_APP = { 2004: 'no such app' };
const appIdParam = P.uint({ description: 'the app' });
const nameParam = P.string({ minLength: 1, maxLength: MAX_APP_NAME_LENGTH, description: 'shown to players in the sign-in dialog' });
const redirectUrisParam = P.string({
  minLength: 1,
  maxLength: MAX_REDIRECT_URIS * (MAX_REDIRECT_URI_LENGTH + 1),
  description:
    `up to ${MAX_REDIRECT_URIS} redirect URIs separated by spaces, each matched exactly: https, or http on a loopback address; ` +
    'no fragment',
});
const scopesParam = P.uint({ maximum: ALL_SCOPES, description: 'bit mask of the scopes the app may ask for: offline 1, games 2, stat 8' });

export const oauthAdminMethods: AnyMethod[] = [
  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.createApp',
    summary: 'Register an OAuth app',
    description:
      'A confidential client (a server) gets `app_secret`, answered this once and stored only as a hash; a public client ' +
      '(an app on the player’s device, `public_client=1`) gets none and must send a PKCE `code_challenge` (S256) to the dialog.',
    params: P.object({
      name: nameParam,
      redirect_uris: redirectUrisParam,
      scopes: P.optional(scopesParam),
      public_client: P.bit({ default: 0, description: '1: an app that cannot keep a secret (no app_secret; PKCE required)' }),
    }),
    result: Type.Object(
      { app: AppSchema, app_secret: Type.Optional(Type.String({ description: 'only now; absent for a public client' })) },
      Strict,
    ),
    handler: async ({ services, inTransaction }, params) =>
      createApp(
        services,
        { name: params.name, redirectUris: params.redirect_uris, scopes: params.scopes ?? 0, publicClient: params.public_client === 1 },
        inTransaction,
      ),
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.updateApp',
    summary: 'Change an OAuth app',
    description:
      'Only the parameters given change. `active=0` is admin.disableApp; `active=1` opens a disabled app again. ' +
      '`new_secret=1` issues a new secret to a confidential client, answered this once (the earlier one stops working; ' +
      'an app imported from a world file has none until then).',
    params: P.object({
      app_id: appIdParam,
      name: P.optional(nameParam),
      redirect_uris: P.optional(redirectUrisParam),
      scopes: P.optional(scopesParam),
      active: P.optional(P.bit({ description: '0 disables the app (see admin.disableApp), 1 enables it' })),
      new_secret: P.bit({ default: 0, description: '1: a new app_secret, answered this once' }),
    }),
    result: Type.Object({ app: AppSchema, app_secret: Type.Optional(Type.String({ description: 'only with new_secret=1' })) }, Strict),
    errors: NO_SUCH_APP,
    handler: async ({ services, inTransaction }, params) => {
      const input = {
        name: params.name,
        redirectUris: params.redirect_uris,
        scopes: params.scopes,
        active: params.active === undefined ? undefined : params.active === 1,
        newSecret: params.new_secret === 1,
      };
      return updateApp(services, params.app_id, input, inTransaction);
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.listApps',
    summary: 'The OAuth apps, oldest first',
    params: P.object({}),
    result: Type.Object({ apps: Type.Array(AppSchema) }, Strict),
    handler: async ({ services }) => ({ apps: await listApps(services) }),
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.disableApp',
    summary: 'Disable an OAuth app',
    description:
      'Its dialog and oauth.exchangeCode refuse it (2005), and every session it obtained is revoked at once. ' +
      'admin.updateApp with `active=1` enables it again.',
    params: P.object({ app_id: appIdParam }),
    result: Type.Object({ app: AppSchema }, Strict),
    errors: NO_SUCH_APP,
    handler: async ({ services, inTransaction }, params) => ({
      app: (await updateApp(services, params.app_id, { active: false }, inTransaction)).app,
    }),
  }),
];
