import type { AnyMethod, Domain } from '../api/method.js';
import { auditMethods } from './audit-methods.js';
import { catalogMethods } from './catalog-methods.js';
import { chatMethods } from './chat-methods.js';
import { drawMethods } from './draw-methods.js';
import { promocodeMethods } from './promocode-methods.js';
import { socialMethods } from './social-methods.js';
import { userMethods } from './user-methods.js';
import { worldMethods } from './world-methods.js';
import { tradeAdminMethods } from '../trades/index.js';

/** Every admin.* method: operating the platform live, authorised by the admin key. */
export const adminMethods: AnyMethod[] = [
  ...userMethods,
  ...catalogMethods,
  ...socialMethods,
  ...chatMethods,
  ...drawMethods,
  ...promocodeMethods,
  ...worldMethods,
  ...tradeAdminMethods,
  ...auditMethods,
];

export const adminDomain: Domain = {
  name: 'admin',
  methods: adminMethods,
};
