import { Type } from '@sinclair/typebox';
import { sql, type RawBuilder } from 'kysely';
import { defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { badParam } from '../api/errors.js';
import { Strict, Uint } from '../api/schema-types.js';
import type { Services } from '../services.js';
import { NOT_BANNED } from '../friends/banned-users.js';
import { MAX_LIST_COUNT, profilesInOrder } from '../friends/lists.js';
import { UserShort } from './schemas.js';
import { nickKey } from './search-keys.js';

/** Characters (not UTF-16 units) a query needs: every nick has at least two. */
export const SEARCH_QUERY_MIN = 2;
const SEARCH_QUERY_MAX = 100;

/** The query as nicks are stored (trimmed, inner white space one space), in lower case. */
function searchKeyOf(query: string): string {
  const key = nickKey(query.trim().replace(/\s+/g, ' '));
  if ([...key].length < SEARCH_QUERY_MIN) throw badParam('query', `must be at least ${SEARCH_QUERY_MIN} characters`);
  return key;
}

/** `%`, `_` and the escape character itself stand for themselves in a LIKE pattern. */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, '\\$&');

/**
 * The smallest string greater (in code point order) than every string that starts with
 * `prefix`: its last code point one higher. Undefined when there is none (only U+10FFFF left).
 */
export function prefixEnd(prefix: string): string | undefined {
  const points = [...prefix].map((c) => c.codePointAt(0)!);
  while (points.length > 0) {
    let last = points.pop()! + 1;
    if (last >= 0xd800 && last <= 0xdfff) last = 0xe000;
    if (last <= 0x10ffff) return String.fromCodePoint(...points, last);
  }
  return undefined;
}

/**
 * Users whose nick or domain starts with `key` (lower case), globally blocked accounts left
 * out. Each side is one range of its index (`users_nick_lower`; `users_domain_lower` on SQLite,
 * `users_domain_search` on PostgreSQL); the
 * LIKE says the same exactly, whatever the range's edges.
 */
export function searchMatches(services: Pick<Services, 'db'>, key: string) {
  const end = prefixEnd(key);
  const pattern = `${escapeLike(key)}%`;
  const startsWith = (column: RawBuilder<unknown>) =>
    end === undefined
      ? sql`(${column} >= ${key} and ${column} like ${pattern} escape '\\')`
      : sql`(${column} >= ${key} and ${column} < ${end} and ${column} like ${pattern} escape '\\')`;
  const domain = services.db.dialect === 'postgres' ? sql`lower(domain) collate "C"` : sql`lower(domain)`;
  return services.db.kysely
    .selectFrom('users')
    .where('global_ban', '=', NOT_BANNED)
    .where(sql<boolean>`(${startsWith(sql`nick_lower`)} or ${startsWith(domain)})`);
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
    const matches = searchMatches(services, searchKeyOf(params.query));
    const { n } = await matches.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const total = Number(n);
    const offset = params.offset!;
    const count = params.count!;
    if (count === 0 || offset >= total) return { count: total, users: [] };
    const page = await matches.select('user_id').orderBy('nick_lower').orderBy('user_id').limit(count).offset(offset).execute();
    return {
      count: total,
      users: await profilesInOrder(
        services,
        page.map((row) => row.user_id),
        'short',
      ),
    };
  },
});
