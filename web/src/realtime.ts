import { useEffect } from 'preact/hooks';
import { session, refreshNow } from './session';
import { Store } from './store';

/** One event of the feed, with the lists its frame carried (messages, users_data...). */
export interface FeedEvent {
  id: number;
  type: string;
  [field: string]: unknown;
}
export interface FeedLists {
  messages?: unknown[];
  rooms?: unknown[];
  users_data?: unknown[];
  item_protos?: unknown[];
}

type Listener = (event: FeedEvent, lists: FeedLists) => void;

const INVALID_TOKEN = 4001;
const SESSION_ENDED = 4003;
const MAX_BACKOFF_MS = 30_000;

/** Whether the feed is connected: the pages show it. */
export const feedState = new Store<'connecting' | 'live'>('connecting');
/** Players online, from the feed's status frames. */
export const onlineCount = new Store<number | undefined>(undefined);
/** The signed-in connection's counters (`auth` frame), kept current by the events that change them. */
export const counters = new Store<{ messages_new?: number; trades_new?: number; friends_requests?: number; invites?: number }>({});
/** The balance in units: `wallet.balance` events, or what a page read. */
export const balance = new Store<number | undefined>(undefined);
/** How many times the feed has (re)connected: pages read again what they show when it changes after a drop. */
export const connections = new Store(0);

const listeners = new Set<Listener>();
let socket: WebSocket | undefined;
let attempts = 0;
let lastId: number | undefined;
let retryTimer: ReturnType<typeof setTimeout> | undefined;
let connectedToken: string | undefined;

export function onFeedEvent(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function url(token: string | undefined): string {
  // A signed-in player follows the lobby too: their invitations and their room, whatever the page.
  const params = new URLSearchParams({ subs: token ? 'gchat,rooms' : 'gchat' });
  if (token) params.set('access_token', token);
  if (lastId !== undefined) params.set('id_last', String(lastId));
  return `${window.location.protocol === 'https:' ? 'wss' : 'ws'}://${window.location.host}/ws?${params}`;
}

/** ExtWS frames: `1` open, `2` ping (answered `3`), `4<event><json>`. */
function receive(text: string): void {
  if (text === '2') return socket?.send('3');
  if (text.startsWith('1')) {
    attempts = 0;
    feedState.set('live');
    connections.set(connections.value + 1);
    return;
  }
  if (!text.startsWith('4')) return;
  const start = text.search(/[[{]/);
  const name = start < 0 ? text.slice(1) : text.slice(1, start);
  let data: Record<string, unknown>;
  try {
    data = start < 0 ? {} : (JSON.parse(text.slice(start)) as Record<string, unknown>);
  } catch {
    return;
  }
  if (name === 'auth') {
    const given = data.counters as typeof counters.value | undefined;
    if (given) counters.set(given);
  } else if (name === 'status') {
    const status = data.status as { online?: number } | undefined;
    if (typeof status?.online === 'number') onlineCount.set(status.online);
  } else if (name === 'events') {
    const events = (data.events ?? []) as FeedEvent[];
    for (const event of events) {
      if (event.type === 'im.sync' && typeof event.messages_new === 'number')
        counters.set({ ...counters.value, messages_new: event.messages_new });
      if (event.type === 'wallet.balance' && typeof event.balance === 'number') balance.set(event.balance);
      for (const listener of listeners) listener(event, data as FeedLists);
    }
    if (typeof data.id_last_given === 'number') lastId = data.id_last_given;
  }
}

function connect(): void {
  clearTimeout(retryTimer);
  const token = session.value?.access_token;
  connectedToken = token;
  counters.set({});
  if (!token) balance.set(undefined);
  const current = new WebSocket(url(token));
  socket = current;
  current.onmessage = (message) => receive(String(message.data));
  current.onclose = (closed) => {
    if (socket !== current) return;
    socket = undefined;
    feedState.set('connecting');
    if ((closed.code === INVALID_TOKEN || closed.code === SESSION_ENDED) && session.value) void refreshNow();
    // Backoff with jitter: 0.5 s, 1 s, 2 s... up to 30 s.
    const delay = Math.min(MAX_BACKOFF_MS, 500 * 2 ** attempts++) * (0.75 + Math.random() / 2);
    retryTimer = setTimeout(connect, delay);
  };
}

/**
 * Calls `listener` with every feed event while the component is shown, and `recover` each time
 * the feed connects again after a drop (what happened meanwhile may not have been heard).
 */
export function useFeed(listener: Listener, recover: () => void, deps: unknown[] = []): void {
  useEffect(() => {
    const seen = connections.value;
    const stopEvents = onFeedEvent(listener);
    const stopConnections = connections.subscribe((count) => count > seen && recover());
    return () => {
      stopEvents();
      stopConnections();
    };
  }, deps);
}

/** Connects (again) with the session's token; a new token or sign-out reconnects. */
export function startFeed(): void {
  connect();
  session.subscribe((next) => {
    if (next?.access_token === connectedToken) return;
    const old = socket;
    socket = undefined;
    old?.close(1000);
    attempts = 0;
    connect();
  });
}
