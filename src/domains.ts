import type { Domain } from './api/method.js';
import { authDomain } from './auth/index.js';
import { usersDomain } from './users/index.js';
import { friendsDomain } from './friends/index.js';
import { catalogDomain } from './catalog/index.js';
import { inventoryDomain } from './inventory/index.js';
import { chatDomain } from './chat/index.js';
import { messagesDomain } from './messages/index.js';
import { tradesDomain } from './trades/index.js';
import { promocodesDomain } from './promocodes/index.js';
import { marketDomain } from './market/index.js';
import { adminDomain } from './admin/index.js';
import { accountsDomain } from './accounts/index.js';
import { oauthDomain } from './oauth/index.js';
import { gameDomain } from './game/index.js';
import { roomsDomain } from './rooms/index.js';
import { missionsDomain } from './missions/index.js';
import { homeDomain } from './home/index.js';

/** Every capability of the server, in start order. */
export const domains: Domain[] = [
  authDomain,
  usersDomain,
  friendsDomain,
  catalogDomain,
  inventoryDomain,
  tradesDomain,
  chatDomain,
  messagesDomain,
  promocodesDomain,
  marketDomain,
  accountsDomain,
  oauthDomain,
  gameDomain,
  missionsDomain,
  roomsDomain,
  homeDomain,
  adminDomain,
];

/** Every admin.* method, the admin domain's and those other capabilities declare for their own data. */
export const allAdminMethods = () => allMethods().filter((m) => m.auth === 'admin');

export const allMethods = () => domains.flatMap((d) => d.methods);
