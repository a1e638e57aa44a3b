import { Redis } from 'ioredis';

/**
 * The connection for commands. Commands given within one turn of the event loop (a request's
 * counters and announcements, those of requests answered together) go to Redis in one write,
 * in the order they were given: each write to a local socket costs the process as much as
 * the command itself.
 */
export function connectRedis(url: string): Redis {
  return new Redis(url, {
    lazyConnect: false,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    enableAutoPipelining: true,
  });
}

/** A connection of its own for subscriptions (a subscribed connection serves nothing else), to the same server. */
export function subscriberConnection(redis: Redis, connectionName?: string): Redis {
  return redis.duplicate({ enableAutoPipelining: false, ...(connectionName ? { connectionName } : {}) });
}
