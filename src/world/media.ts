import type { World } from './schema.js';

/** Where world files name images served by this server: a root-relative path below it. */
const OWN_MEDIA = '/media/';

/** The fields of `entry` named in `fields` that hold own media paths, made absolute. */
function absolute<T extends object>(base: string, entry: T, fields: (keyof T & string)[]): T {
  const changed: Record<string, string> = {};
  for (const field of fields) {
    const value = entry[field];
    if (typeof value === 'string' && value.startsWith(OWN_MEDIA)) changed[field] = `${base}${value}`;
  }
  return Object.keys(changed).length === 0 ? entry : { ...entry, ...changed };
}

/**
 * The world with its root-relative media paths (`/media/...`: the demo world's images) made
 * absolute against `base` (an operator's media storage, or the server's public address), so
 * that every client, bots included, gets URLs it can open. Without a base they stay relative,
 * which browsers resolve against this server.
 */
export function withMediaBase(world: unknown, base: string | undefined): unknown {
  if (!base || world === null || typeof world !== 'object') return world;
  const input = world as World;
  const root = base.replace(/\/+$/, '');
  return {
    ...input,
    ...(Array.isArray(input.item_protos) ? { item_protos: input.item_protos.map((p) => absolute(root, p, ['image'])) } : {}),
    ...(Array.isArray(input.users) ? { users: input.users.map((u) => absolute(root, u, ['avatar', 'profile_cover'])) } : {}),
  };
}
