import { Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { ApiError, Code, badParam } from '../api/errors.js';
import { Strict, Ts, Uint } from '../api/schema-types.js';
import type { DrawsTable } from '../db/tables.js';
import type { Services } from '../services.js';
import { requireUser } from '../users/index.js';
import { countDraws, selectDraws, type DrawMatch } from './queries.js';

export const MAX_DRAWS_PAGE = 100;
export const MAX_DRAWS_EXPORT = 100_000;

const OddsEntry = Type.Object({ item_proto_id: Uint, weight: Type.Integer({ minimum: 1 }) }, Strict);

export const DrawSchema = Type.Object(
  {
    draw_id: Uint,
    ts: Ts,
    user_id: Type.Integer({ minimum: 1, description: 'who opened the item' }),
    user_id_receiver: Type.Integer({ minimum: 1, description: 'who received the items (the opener, or a friend for a gift set)' }),
    kind: Type.Union([Type.Literal('case'), Type.Literal('gift')]),
    case_item_id: Uint,
    case_item_proto_id: Uint,
    key_item_id: Type.Optional(Uint),
    key_item_proto_id: Type.Optional(Uint),
    result_item_ids: Type.Array(Uint),
    result_item_proto_ids: Type.Array(Uint),
    odds_version: Type.String({ description: 'first 16 hex digits of the SHA-256 of the odds as JSON text' }),
    odds: Type.Array(OddsEntry, { description: 'the published entries the opening used, with their weights' }),
    request_id: Type.Optional(Type.String()),
  },
  { ...Strict, $id: 'Draw' },
);

const filters = {
  user_id: P.optional(P.idOrDomain({ description: 'draws by this opener (id or domain)' })),
  case_item_proto_id: P.optional(P.uint({ minimum: 1, description: 'draws of cases or gift sets of this prototype' })),
  since: P.optional(P.uint({ description: 'Unix time: draws at or after it' })),
  until: P.optional(P.uint({ description: 'Unix time: draws before it' })),
};

interface DrawFilters {
  user_id?: number | string;
  case_item_proto_id?: number;
  since?: number;
  until?: number;
}

function drawObject(row: Selectable<DrawsTable>) {
  return {
    draw_id: row.draw_id,
    ts: row.ts,
    user_id: row.user_id,
    user_id_receiver: row.receiver_user_id,
    kind: row.kind,
    case_item_id: row.case_item_id,
    case_item_proto_id: row.case_item_proto_id,
    ...(row.key_item_id !== null ? { key_item_id: row.key_item_id } : {}),
    ...(row.key_item_proto_id !== null ? { key_item_proto_id: row.key_item_proto_id } : {}),
    result_item_ids: JSON.parse(row.result_item_ids) as number[],
    result_item_proto_ids: JSON.parse(row.result_item_proto_ids) as number[],
    odds_version: row.odds_version,
    odds: JSON.parse(row.odds) as { item_proto_id: number; weight: number }[],
    ...(row.request_id !== null ? { request_id: row.request_id } : {}),
  };
}

/** The draws matching the filters, oldest first; a user or a prototype must be named. */
async function drawMatch(services: Services, filters: DrawFilters): Promise<DrawMatch> {
  if (filters.user_id === undefined && filters.case_item_proto_id === undefined)
    throw badParam('user_id', 'name a user_id or a case_item_proto_id');
  return {
    userId: filters.user_id === undefined ? undefined : await requireUser(services, filters.user_id),
    caseItemProtoId: filters.case_item_proto_id,
    since: filters.since,
    until: filters.until,
  };
}

const CSV_COLUMNS = [
  'draw_id',
  'ts',
  'user_id',
  'user_id_receiver',
  'kind',
  'case_item_id',
  'case_item_proto_id',
  'key_item_id',
  'key_item_proto_id',
  'result_item_ids',
  'result_item_proto_ids',
  'odds_version',
  'odds',
  'request_id',
] as const;

/** One CSV field (RFC 4180): quoted when it holds a comma, quote or line break. */
function csvField(value: unknown): string {
  const text = value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const drawMethods: AnyMethod[] = [
  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.listDraws',
    summary: 'The recorded openings of cases and gift sets, for a user or a prototype',
    description:
      'Every opening is recorded when it happens: who opened what with which key, what was received, and the odds it used (the weights published at that moment, and their version). Records are never removed by the server. Oldest first.',
    params: P.object({
      ...filters,
      offset: P.uint({ default: 0, description: 'draws to skip' }),
      count: P.uint({ default: 20, tooMany: MAX_DRAWS_PAGE, description: 'draws to return' }),
    }),
    result: Type.Object({ count: Uint, draws: Type.Array(DrawSchema) }, Strict),
    errors: { 101: 'user does not exist' },
    handler: async ({ services }, params) => {
      const match = await drawMatch(services, params);
      const k = services.db.kysely;
      const [rows, count] = await Promise.all([
        selectDraws(k, match, { offset: params.offset, limit: params.count }),
        countDraws(k, match),
      ]);
      return { count, draws: rows.map(drawObject) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.exportDraws',
    summary: 'Every recorded opening for a user or a prototype, as CSV',
    description: `The draws admin.listDraws lists, all of them (at most ${MAX_DRAWS_EXPORT}, else code 6), as CSV text with a header line; lists are JSON arrays.`,
    params: P.object(filters),
    result: Type.Object({ count: Uint, csv: Type.String() }, Strict),
    errors: { 101: 'user does not exist' },
    handler: async ({ services }, params) => {
      const match = await drawMatch(services, params);
      const rows = await selectDraws(services.db.kysely, match, { limit: MAX_DRAWS_EXPORT + 1 });
      if (rows.length > MAX_DRAWS_EXPORT)
        throw new ApiError(Code.TOO_MANY_OBJECTS, `more than ${MAX_DRAWS_EXPORT} draws match: narrow them with since and until`);
      const lines = [CSV_COLUMNS.join(',')];
      for (const row of rows) {
        const draw = drawObject(row) as Record<string, unknown>;
        lines.push(CSV_COLUMNS.map((column) => csvField(draw[column])).join(','));
      }
      return { count: rows.length, csv: `${lines.join('\r\n')}\r\n` };
    },
  }),
];
