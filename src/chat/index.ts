import type { Domain } from '../api/method.js';
import { gchatGet, gchatSend } from './methods.js';

export const chatDomain: Domain = {
  name: 'chat',
  methods: [gchatGet, gchatSend],
};
