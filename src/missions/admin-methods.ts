import { Type } from '@sinclair/typebox';
import { ApiError, badParam, Code } from '../api/errors.js';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict } from '../api/schema-types.js';
import type { Executor } from '../db/connection.js';
import { nowSeconds } from '../services.js';
import { deleteMission, insertMission, protoExists, selectMissions, updateMission, type StoredMission } from './queries.js';
import { AdminMission, adminMissionJson } from './views.js';

/** The largest money reward, in units. */
export const MAX_MISSION_MONEY = 1_000_000;
export const MAX_MISSION_TARGET = 1000;

const missionId = P.uint({ minimum: 1, description: 'the mission' });
const fields = {
  name: P.string({ minLength: 1, maxLength: 100, trim: true, description: 'what the players read' }),
  goal: P.enum(['play', 'win'] as const, { description: 'play: games finished; win: games won' }),
  target: P.uint({ minimum: 1, maximum: MAX_MISSION_TARGET, description: 'games of the goal in a week' }),
  reward_type: P.enum(['money', 'item'] as const, { description: 'money, or an item' }),
  reward: P.uint({
    minimum: 1,
    description: `money: whole units of the currency, at most ${MAX_MISSION_MONEY}; item: the prototype (item_proto_id) of the item given`,
  }),
  active: P.bit({ description: '0: hidden from players and not counted' }),
};

const NoMission = { 2: 'no such mission, or a bad reward (an unknown prototype, money above the limit)' };

/** Refuses a reward that cannot be given. */
async function checkReward(trx: Executor, mission: Pick<StoredMission, 'reward_type' | 'reward'>): Promise<void> {
  if (mission.reward_type === 'money' && mission.reward > MAX_MISSION_MONEY)
    throw badParam('reward', `money rewards are at most ${MAX_MISSION_MONEY} units`);
  if (mission.reward_type === 'item' && !(await protoExists(trx, mission.reward)))
    throw badParam('reward', `prototype ${mission.reward} does not exist`);
}

const noMission = (id: number) => new ApiError(Code.BAD_PARAM, `parameter mission_id: no mission ${id}`);

export const missionAdminMethods: AnyMethod[] = [
  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.missionCreate',
    summary: 'Define a mission of the week',
    description:
      'A goal players reach in a week (Monday 00:00 UTC to the next): `play` or `win` `target` games. The game that reaches it gives the reward ' +
      'in its end, once a week per player: money (ledger kind `mission`) or one item of a prototype. Active at once unless `active` is 0.',
    params: P.object({
      name: fields.name,
      goal: fields.goal,
      target: fields.target,
      reward_type: fields.reward_type,
      reward: fields.reward,
      active: P.optional(P.bit({ default: 1, description: '0: defined, not yet shown or counted' })),
    }),
    result: Type.Object({ mission: AdminMission }, Strict),
    errors: NoMission,
    handler: async ({ services, inTransaction }, params) => {
      const mission = await inTransaction(async (trx) => {
        await checkReward(trx, params);
        return insertMission(trx, {
          name: params.name,
          goal: params.goal,
          target: params.target,
          reward_type: params.reward_type,
          reward: params.reward,
          active: params.active ?? 1,
          ts_created: nowSeconds(services),
        });
      });
      return { mission: adminMissionJson(mission) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.missionUpdate',
    summary: 'Change a mission',
    description:
      'Changes the fields given. Progress already counted stays; a lower target gives the reward at the next game counted, a reward ' +
      'already given is not given again in the same week.',
    params: P.object({
      mission_id: missionId,
      name: P.optional(fields.name),
      goal: P.optional(fields.goal),
      target: P.optional(fields.target),
      reward_type: P.optional(fields.reward_type),
      reward: P.optional(fields.reward),
      active: P.optional(fields.active),
    }),
    result: Type.Object({ mission: AdminMission }, Strict),
    errors: NoMission,
    handler: async ({ inTransaction }, params) => {
      const { mission_id, ...change } = params;
      const defined = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)) as Partial<StoredMission>;
      const mission = await inTransaction(async (trx) => {
        const updated = await updateMission(trx, mission_id, defined);
        if (!updated) throw noMission(mission_id);
        await checkReward(trx, updated);
        return updated;
      });
      return { mission: adminMissionJson(mission) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.missionDelete',
    summary: 'Remove a mission and its progress',
    description: 'Rewards already given stay given; to keep the progress, set `active` 0 with admin.missionUpdate instead.',
    params: P.object({ mission_id: missionId }),
    result: Type.Object({}, Strict),
    errors: NoMission,
    handler: async ({ inTransaction }, params) => {
      const deleted = await inTransaction((trx) => deleteMission(trx, params.mission_id));
      if (!deleted) throw noMission(params.mission_id);
      return {};
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.missionList',
    summary: 'Every mission, active or not',
    params: P.object({}),
    result: Type.Object({ missions: Type.Array(AdminMission) }, Strict),
    handler: async ({ services }) => ({ missions: (await selectMissions(services.db.kysely, false)).map(adminMissionJson) }),
  }),
];
