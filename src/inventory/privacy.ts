import { ApiError, Code } from '../api/errors.js';
import type { InventoryPrivacy } from '../db/tables.js';
import type { Services } from '../services.js';
import { isFriend, readInventoryPrivacy } from './queries.js';

/**
 * Whether the owner's inventory privacy lets the viewer read it: `everyone`; `friends` (the
 * owner's friends only); `nobody`. The owner may always read their own inventory.
 */
export async function mayReadInventory(services: Services, ownerId: number, viewerId: number | undefined): Promise<boolean> {
  if (viewerId === ownerId) return true;
  const privacy = await readInventoryPrivacy(services.db.kysely, ownerId);
  const friend = privacy === 'friends' && viewerId !== undefined && (await isFriend(services.db.kysely, ownerId, viewerId));
  return inventoryShownTo(privacy, friend);
}

/** Whether an inventory with this privacy shows to someone other than its owner who is (or is not) the owner's friend. */
export function inventoryShownTo(privacy: InventoryPrivacy | undefined, friend: boolean): boolean {
  return privacy === 'everyone' || (privacy === 'friends' && friend);
}

/** Applies the owner's inventory privacy (see mayReadInventory): anyone it refuses, 701. */
export async function checkInventoryPrivacy(services: Services, ownerId: number, viewerId: number | undefined): Promise<void> {
  if (!(await mayReadInventory(services, ownerId, viewerId)))
    throw new ApiError(Code.PRIVACY, 'the privacy settings of the user do not allow reading this inventory');
}
