import { Type } from '@sinclair/typebox';
import { defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { badParam } from '../api/errors.js';
import { Strict, Uint } from '../api/schema-types.js';
import { MAX_LIST_COUNT, profilesInOrder } from './lists.js';
import { UserShort } from './schemas.js';
import { nickKey } from './search-keys.js';
import { searchPage } from './queries.js';

/** Characters (not UTF-16 units) a query needs: every nick has at least two. */
export const SEARCH_QUERY_MIN = 2;
const SEARCH_QUERY_MAX = 100;

/** The query as nicks are stored (trimmed, inner white space one space), in lower case. */
function searchKeyOf(query: string): string {
  const key = nickKey(query.trim().replace(/\s+/g, ' '));
  if ([...key].length < SEARCH_QUERY_MIN) throw badParam('query', `must be at least ${SEARCH_QUERY_MIN} characters`);
  return key;
}

export const usersSearch = defineMethod({
  name: 'users.search',
  summary: 'Finds users by the start of their nick or domain',
  description:
    'Users whose nick or domain starts with `query`, in any case (white space inside the query counts as one space; `%` and `_` ' +
    'are plain characters), in the short form, by nick; `count` is the number of users found. Globally blocked accounts are ' +
    `left out. A query shorter than ${SEARCH_QUERY_MIN} characters answers 2.`,
  auth: 'optional',
  params: P.object({
    query: P.string({ maxLength: SEARCH_QUERY_MAX, description: `the start of a nick or domain; at least ${SEARCH_QUERY_MIN} characters` }),
    offset: P.optional(P.uint({ default: 0, description: 'offset from the start of the list' })),
    count: P.optional(P.uint({ default: 20, tooMany: MAX_LIST_COUNT, description: 'number of elements; at most 50' })),
  }),
  result: Type.Object({ count: Uint, users: Type.Array(UserShort) }, Strict),
  handler: async ({ services }, params) => {
    const { total, ids } = await searchPage(services.db, searchKeyOf(params.query), { offset: params.offset!, count: params.count! });
    return { count: total, users: await profilesInOrder(services, ids, 'short') };
  },
});
