export { withMediaBase } from './media.js';
