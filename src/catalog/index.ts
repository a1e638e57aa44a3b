import type { Domain } from '../api/method.js';
import { unwatchCatalog, watchCatalog } from './cache.js';
import { getItemProtos, searchItemProtos } from './methods.js';

export const catalogDomain: Domain = {
  name: 'catalog',
  methods: [getItemProtos, searchItemProtos],
  start: (services) => watchCatalog(services),
  stop: (services) => unwatchCatalog(services),
};
