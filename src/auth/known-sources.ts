import { newToken, sha256 } from '../infra/secrets.js';
import { nowSeconds, type Services } from '../services.js';

/** Addresses and device tokens kept per account (the most recently used). */
const MAX_SOURCES_PER_KIND = 20;
/** A source unused this long is forgotten, seconds. */
export const SOURCE_LIFETIME = 90 * 86400;

/** Where a sign-in comes from: its address, and the device token the client presented, if any. */
export interface SigninSource {
  ip: string;
  deviceToken?: string;
}

/**
 * Which of the account's known sources this sign-in comes from: its device token (issued by
 * the server at an earlier successful sign-in), else its address (one the account signed in
 * from successfully before), else none. Returns the source's name for per-source counters.
 */
export async function knownSource(services: Services, userId: number, source: SigninSource): Promise<string | null> {
  const since = nowSeconds(services) - SOURCE_LIFETIME;
  const device = source.deviceToken ? sha256(source.deviceToken) : undefined;
  const rows = await services.db.kysely
    .selectFrom('signin_sources')
    .select(['kind', 'value'])
    .where('user_id', '=', userId)
    .where('last_seen', '>', since)
    .where((eb) =>
      eb.or([
        eb.and([eb('kind', '=', 'ip'), eb('value', '=', source.ip)]),
        ...(device ? [eb.and([eb('kind', '=', 'device'), eb('value', '=', device)])] : []),
      ]),
    )
    .execute();
  const byDevice = rows.find((r) => r.kind === 'device');
  if (byDevice) return `device:${byDevice.value.slice(0, 32)}`;
  return rows.length > 0 ? `ip:${source.ip}` : null;
}

/**
 * Records a successful sign-in's address and device, and answers the device token to give
 * the client: the one it presented when that is the account's, else a new one.
 */
export async function rememberSource(services: Services, userId: number, source: SigninSource): Promise<string> {
  const now = nowSeconds(services);
  const presented = source.deviceToken ? sha256(source.deviceToken) : undefined;
  const known =
    presented !== undefined &&
    (await services.db.kysely
      .selectFrom('signin_sources')
      .select('value')
      .where('user_id', '=', userId)
      .where('kind', '=', 'device')
      .where('value', '=', presented)
      .where('last_seen', '>', now - SOURCE_LIFETIME)
      .executeTakeFirst()) !== undefined;
  const deviceToken = known ? source.deviceToken! : newToken();
  await services.db.kysely.transaction().execute(async (trx) => {
    for (const [kind, value] of [
      ['ip', source.ip],
      ['device', sha256(deviceToken)],
    ] as const) {
      await trx
        .insertInto('signin_sources')
        .values({ user_id: userId, kind, value, last_seen: now })
        .onConflict((oc) => oc.columns(['user_id', 'kind', 'value']).doUpdateSet({ last_seen: now }))
        .execute();
      // Only the most recent sources are kept: an account's list cannot grow without bound.
      const kept = await trx
        .selectFrom('signin_sources')
        .select('last_seen')
        .where('user_id', '=', userId)
        .where('kind', '=', kind)
        .orderBy('last_seen', 'desc')
        .offset(MAX_SOURCES_PER_KIND - 1)
        .limit(1)
        .executeTakeFirst();
      if (kept)
        await trx
          .deleteFrom('signin_sources')
          .where('user_id', '=', userId)
          .where('kind', '=', kind)
          .where('last_seen', '<', kept.last_seen)
          .execute();
    }
  });
  return deviceToken;
}

/** Forgets sources unused for SOURCE_LIFETIME. */
export async function sweepSources(services: Services): Promise<number> {
  const result = await services.db.kysely
    .deleteFrom('signin_sources')
    .where('last_seen', '<', nowSeconds(services) - SOURCE_LIFETIME)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
