import type { Domain } from './api/method.js';
import { authDomain } from './auth/index.js';
import { usersDomain } from './users/index.js';
import { friendsDomain } from './friends/index.js';
import { catalogDomain } from './catalog/index.js';
import { inventoryDomain } from './inventory/index.js';
import { chatDomain } from './chat/index.js';
import { tradesDomain } from './trades/index.js';
import { promocodesDomain } from './promocodes/index.js';
import { marketDomain } from './market/index.js';
import { adminDomain } from './admin/index.js';
import { accountsDomain } from './accounts/index.js';
import { gameDomain } from './game/index.js';

/** Every capability of the server, in start order. */
export const domains: Domain[] = [
  authDomain,
  usersDomain,
  friendsDomain,
  catalogDomain,
  inventoryDomain,
  tradesDomain,
  chatDomain,
  promocodesDomain,
  marketDomain,
  accountsDomain,
  gameDomain,
  adminDomain,
];

export const allMethods = () => domains.flatMap((d) => d.methods);
