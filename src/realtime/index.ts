// The live feed, as the other folders use it: the events it carries.
export type { FeedEvent } from './hub.js';
