import { Type } from '@sinclair/typebox';
import { Bit, Strict, Ts, Uint } from '../api/schema-types.js';

export const AppSchema = Type.Object(
  {
    app_id: Uint,
    name: Type.String(),
    redirect_uris: Type.Array(Type.String(), { description: 'the redirect URIs, each matched exactly' }),
    scopes: Type.Integer({ minimum: 0, description: 'bit mask of the scopes the app may ask for: offline 1, games 2, stat 8' }),
    public_client: Bit,
    active: Bit,
    created_at: Ts,
  },
  { ...Strict, $id: 'OauthApp' },
);

export const AppGrantSchema = Type.Object(
  {
    app_id: Uint,
    name: Type.String(),
    scope: Type.Integer({ minimum: 0, description: 'bit mask of the scopes granted' }),
    scopes: Type.Array(Type.String(), { description: 'their names' }),
    ts: Ts,
  },
  { ...Strict, $id: 'OauthGrant' },
);
