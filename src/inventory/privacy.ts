import { ApiError, Code } from '../api/errors.js';
import type { Services } from '../services.js';

export interface InventoryOwner {
  user_id: number;
  inventory_privacy: string;
}

/** The owner of an inventory by id or domain, with their privacy setting; 101 when unknown. */
export async function findInventoryOwner(services: Services, idOrDomain: number | string): Promise<InventoryOwner> {
  const query = services.db.kysely.selectFrom('users').select(['user_id', 'inventory_privacy']);
  const row = await (typeof idOrDomain === 'number'
    ? query.where('user_id', '=', idOrDomain)
    : query.where('domain', '=', idOrDomain)
  ).executeTakeFirst();
  if (!row) throw new ApiError(Code.USER_NOT_FOUND, 'user does not exist');
  return row;
}

/**
 * Applies the owner's inventory privacy: `everyone`; `friends` (the owner's friends only);
 * `nobody`. The owner may always read their own inventory. Anyone else refused: 701.
 */
export async function checkInventoryPrivacy(services: Services, owner: InventoryOwner, viewerId: number | undefined): Promise<void> {
  if (viewerId === owner.user_id || owner.inventory_privacy === 'everyone') return;
  if (owner.inventory_privacy === 'friends' && viewerId !== undefined) {
    const friendship = await services.db.kysely
      .selectFrom('friendships')
      .select('user_id')
      .where('user_id', '=', owner.user_id)
      .where('friend_id', '=', viewerId)
      .executeTakeFirst();
    if (friendship) return;
  }
  throw new ApiError(Code.PRIVACY, 'the privacy settings of the user do not allow reading this inventory');
}
