import { ApiError, Code } from '../api/errors.js';
import type { Services } from '../services.js';

/**
 * Applies the owner's inventory privacy: `everyone`; `friends` (the owner's friends only);
 * `nobody`. The owner may always read their own inventory. Anyone else refused: 701.
 */
export async function checkInventoryPrivacy(services: Services, ownerId: number, viewerId: number | undefined): Promise<void> {
  if (viewerId === ownerId) return;
  const owner = await services.db.kysely.selectFrom('users').select('inventory_privacy').where('user_id', '=', ownerId).executeTakeFirst();
  if (owner?.inventory_privacy === 'everyone') return;
  if (owner?.inventory_privacy === 'friends' && viewerId !== undefined) {
    const friendship = await services.db.kysely
      .selectFrom('friendships')
      .select('user_id')
      .where('user_id', '=', ownerId)
      .where('friend_id', '=', viewerId)
      .executeTakeFirst();
    if (friendship) return;
  }
  throw new ApiError(Code.PRIVACY, 'the privacy settings of the user do not allow reading this inventory');
}
