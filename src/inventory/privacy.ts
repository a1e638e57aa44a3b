import { ApiError, Code } from '../api/errors.js';
import type { Services } from '../services.js';
import { isFriend, readInventoryPrivacy } from './queries.js';

/**
 * Applies the owner's inventory privacy: `everyone`; `friends` (the owner's friends only);
 * `nobody`. The owner may always read their own inventory. Anyone else refused: 701.
 */
export async function checkInventoryPrivacy(services: Services, ownerId: number, viewerId: number | undefined): Promise<void> {
  if (viewerId === ownerId) return;
  const privacy = await readInventoryPrivacy(services.db.kysely, ownerId);
  if (privacy === 'everyone') return;
  if (privacy === 'friends' && viewerId !== undefined && (await isFriend(services.db.kysely, ownerId, viewerId))) return;
  throw new ApiError(Code.PRIVACY, 'the privacy settings of the user do not allow reading this inventory');
}
