import type { Services } from '../services.js';
import { inactiveObject, isGloballyBanned, loadProfiles, profileObject, type Profile } from '../users/index.js';
import type { ChatUser } from './schemas.js';

/** A user as the chat shows them: the short form, or for a globally blocked account users.get's placeholder (as `shownProfile`). */
export function chatUserOf(services: Services, profile: Profile): ChatUser {
  return isGloballyBanned(profile) ? inactiveObject('global_ban', profile) : profileObject(services, profile, 'short');
}

/** The users by id as the chat shows them; ids with no user are absent. */
export async function loadChatUsers(services: Services, ids: number[]): Promise<Map<number, ChatUser>> {
  const profiles = await loadProfiles(services, ids);
  return new Map([...profiles].map(([id, profile]) => [id, chatUserOf(services, profile)]));
}
