import type { Services } from '../services.js';
import { P } from '../api/params.js';
import {
  loadProfilesByKey,
  loadUsers,
  profileTexts,
  type UserForm,
  type UserFullObject,
  type UserObject,
  type UserShortObject,
} from './profiles.js';

export const MAX_LIST_COUNT = 50;

/** Paging parameters shared by the relation lists. */
export const pagingParams = {
  offset: P.optional(P.uint({ default: 0, description: 'offset from the start of the list' })),
  count: P.optional(P.uint({ default: 20, tooMany: MAX_LIST_COUNT, description: 'number of elements; at most 50' })),
  type: P.optional(P.string({ description: '`short` returns the short form; any other value the full form' })),
};

export const formOf = (type: string | undefined): UserForm => (type === 'short' ? 'short' : 'full');

/** Profiles of `ids` in their order, as seen by `viewerId` (ids whose user vanished are skipped). */
export async function profilesInOrder(services: Services, ids: number[], form: 'short'): Promise<UserShortObject[]>;
export async function profilesInOrder(services: Services, ids: number[], form: 'full', viewerId?: number): Promise<UserFullObject[]>;
export async function profilesInOrder(services: Services, ids: number[], form: UserForm, viewerId?: number): Promise<UserObject[]>;
export async function profilesInOrder(services: Services, ids: number[], form: UserForm, viewerId?: number): Promise<UserObject[]> {
  const users = await loadUsers(services, ids, { form, viewerId });
  return ids.map((id) => users.get(id)).filter((u) => u !== undefined);
}

/** The same as JSON texts, as JSON.stringify would write each of `profilesInOrder`'s profiles. */
export async function profileTextsInOrder(services: Services, ids: number[], form: UserForm, viewerId?: number): Promise<string[]> {
  const { ofIds } = await loadProfilesByKey(services, ids);
  return profileTexts(
    services,
    ofIds.filter((profile) => profile !== undefined),
    form,
    viewerId,
  );
}
