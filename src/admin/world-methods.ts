import { Type } from '@sinclair/typebox';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { parseJsonParam } from '../api/depth.js';
import { ApiError, Code } from '../api/errors.js';
import { Strict, Uint } from '../api/schema-types.js';
import { nowSeconds } from '../services.js';
import { announceWorldImported, exportWorld, importWorld, World, WorldError } from '../world/index.js';
import { announceInvalidated } from '../trades/index.js';

/**
 * A world travels as JSON text in the `world` parameter, inside a request body that the
 * server's body limit (config.bodyLimit, 64 KiB by default) caps. Larger files are imported
 * with `game-platform import` against the database, or after raising the limit.
 */
const MAX_WORLD_TEXT = 1024 * 1024 * 1024;

export const worldMethods: AnyMethod[] = [
  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.importWorld',
    summary: 'Import a world file into the running platform',
    description:
      "world is the world file as JSON text (a string, also inside a JSON body). merge (default) adds the file's entries and replaces stored entries with the same id; its entries may refer to users and prototypes already stored. replace makes the world exactly the file (every session ends; the audit log stays). The import runs in one transaction: a bad file changes nothing and answers 2 naming the entries at fault. The request body limit of the server applies (64 KiB by default): import larger files with `game-platform import FILE` on the server, or raise its body limit.",
    params: P.object({
      world: P.string({ maxLength: MAX_WORLD_TEXT, description: 'the world file, as JSON text' }),
      mode: P.enum(['merge', 'replace'], {
        default: 'merge',
        description: 'merge: add and replace entries by id; replace: the world becomes exactly the file',
      }),
    }),
    result: Type.Object(
      {
        mode: Type.Union([Type.Literal('merge'), Type.Literal('replace')]),
        users: Uint,
        item_protos: Uint,
        items: Uint,
        friendships: Uint,
        messages: Uint,
        users_signed_out: Type.Integer({
          minimum: 0,
          description: 'users whose sessions the import ended (banned ones; everyone on replace)',
        }),
      },
      Strict,
    ),
    handler: async ({ services, inTransaction }, params) => {
      const world = parseJsonParam('world', params.world);
      let summary;
      try {
        summary = await importWorld(services.db, world, { mode: params.mode, now: nowSeconds(services), inTransaction });
      } catch (error) {
        if (error instanceof WorldError) throw new ApiError(Code.BAD_PARAM, error.message);
        throw error;
      }
      await announceWorldImported(services.bus, summary);
      await announceInvalidated(services, summary.invalidatedTrades);
      return {
        mode: params.mode,
        users: summary.users,
        item_protos: summary.item_protos,
        items: summary.items,
        friendships: summary.friendships,
        messages: summary.messages,
        users_signed_out: summary.endedSessionsOf.length,
      };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.exportWorld',
    summary: 'Export the whole world in the world-file format',
    description:
      'Passwords appear as argon2id hashes, TOTP secrets in clear (opened with the secret key; the file is as sensitive as the database); only owned items are included.',
    params: P.object({}),
    result: Type.Object({ world: World }, Strict),
    handler: async ({ services }) => ({ world: await exportWorld(services.db) }),
  }),
];
