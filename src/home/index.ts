import type { Domain } from '../api/method.js';
import { homeMethods } from './methods.js';

/** The home screen and the profile page, each in one call composed from the domains' public faces. */
export const homeDomain: Domain = {
  name: 'home',
  methods: homeMethods,
};
