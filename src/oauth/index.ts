import type { Domain } from '../api/method.js';
import { oauthAdminMethods } from './admin-methods.js';
import { registerDialog } from './dialog.js';
import { accountAppsGet, accountAppsRevoke } from './grants.js';
import { oauthExchangeCode } from './methods.js';

/**
 * The OAuth provider of the reference service: apps (registered by the admin), the dialog at
 * `/oauth`, the code exchange, and the player's list of the apps they allowed.
 */
export const oauthDomain: Domain = {
  name: 'oauth',
  methods: [oauthExchangeCode, accountAppsGet, accountAppsRevoke, ...oauthAdminMethods],
  routes: registerDialog,
};
