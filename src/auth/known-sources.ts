import { newToken, sha256 } from '../infra/secrets.js';
import { nowSeconds, type Services } from '../services.js';
import { deleteSourcesSeenBefore, deviceIsKnown, matchingSources, touchSource } from './queries.js';

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
  const rows = await matchingSources(services.db.kysely, userId, since, { ip: source.ip, deviceHash: device });
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
  const known = presented !== undefined && (await deviceIsKnown(services.db.kysely, userId, presented, now - SOURCE_LIFETIME));
  const deviceToken = known ? source.deviceToken! : newToken();
  await services.db.kysely.transaction().execute(async (trx) => {
    for (const [kind, value] of [
      ['ip', source.ip],
      ['device', sha256(deviceToken)],
    ] as const) {
      // Only the most recent sources are kept: an account's list cannot grow without bound.
      await touchSource(trx, userId, { kind, value }, now, MAX_SOURCES_PER_KIND);
    }
  });
  return deviceToken;
}

/** Forgets sources unused for SOURCE_LIFETIME. */
export async function sweepSources(services: Services): Promise<number> {
  return deleteSourcesSeenBefore(services.db.kysely, nowSeconds(services) - SOURCE_LIFETIME);
}
