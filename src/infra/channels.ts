/** A bus channel: its name between processes and, as a type, the message it carries. */
export interface Channel<M> {
  readonly name: string;
  /** Never set: carries the message type. */
  readonly message?: M;
}

export function defineChannel<M>(name: string): Channel<M> {
  return { name };
}

/** An announcement that says only that something changed. */
export type Announcement = Record<string, never>;

/** The users (or owners) whose rows changed; a message without a readable list means any of them. */
export interface UsersChanged {
  user_ids: number[];
}

/** A revocation notice: every session matching it stops working, in every process. */
export type Revocation = { sessionIds: number[] } | { userId: number } | { familyId: string };

/** The session a caller holds, as a revocation names it. */
export interface HeldSession {
  userId: number;
  sessionId: number;
  familyId: string;
}

/** Whether a revocation ends the session of `caller`: the one rule every holder of sessions applies. */
export function revokes(revocation: Revocation, caller: HeldSession): boolean {
  if (revocation === null || typeof revocation !== 'object') return false;
  return (
    ('sessionIds' in revocation && Array.isArray(revocation.sessionIds) && revocation.sessionIds.includes(caller.sessionId)) ||
    ('userId' in revocation && revocation.userId === caller.userId) ||
    ('familyId' in revocation && revocation.familyId === caller.familyId)
  );
}

/*
 * The channels of the bus that carry no domain's types, with what they carry (a channel that
 * carries a domain's events is defined in that domain: CHAT_EVENTS in chat, FEED_EVENTS in realtime). A change announcement is published after
 * the change is committed; every process, the publisher's included, handles it.
 */

/** A world import into a running deployment: any cached row may have changed. */
export const WORLD_CHANGED = defineChannel<Announcement>('world.changed');
/** The catalogue (item_protos, collections, qualities, item_types) changed. */
export const CATALOG_CHANGED = defineChannel<Announcement>('catalog.changed');
/** Profile columns of `users` changed (nick, ban, mute, flags...). */
export const USERS_CHANGED = defineChannel<UsersChanged>('users.changed');
/** The social graph (friendships, requests, blocks) of these users changed. */
export const FRIENDS_CHANGED = defineChannel<UsersChanged>('friends.changed');
/** The items of these owners changed. */
export const INVENTORY_CHANGED = defineChannel<UsersChanged>('inventory.changed');
/** Sessions were revoked; published confirmed, so none is accepted anywhere once the publication resolves. */
export const SESSIONS_REVOKED = defineChannel<Revocation>('auth.revoked');
/** A user may have come online (a signed-in realtime connection opened): every process counts again and tells its connections. */
export const PRESENCE_CHANGED = defineChannel<Announcement>('realtime.presence');
/**
 * Emitted in this process only, when one of its Redis connections dropped: it may have missed
 * messages, and whatever it cached on the strength of announcements must be forgotten.
 */
export const BUS_LOST = defineChannel<Announcement>('bus.lost');
/**
 * Emitted in this process only, once its subscribed Redis connection is back after a loss and
 * subscribed again: every message published from then on is heard, and whatever was missed
 * meanwhile can only be learnt from the database.
 */
export const BUS_RESTORED = defineChannel<Announcement>('bus.restored');
