import { Type } from '@sinclair/typebox';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { SEASON_LEVEL_XP, SEASON_LEVELS } from './clock.js';
import { Mission, missionsOf, SeasonPass, seasonPassOf, TopWeek, topWeekPage } from './views.js';

/** The longest page of users.getTopWeek. */
export const MAX_TOP_PAGE = 100;

export const missionMethods: AnyMethod[] = [
  defineMethod({
    name: 'missions.get',
    summary: "The week's missions and the caller's progress",
    description:
      'The active missions an operator defined (admin.missionCreate), each a goal of the week: `play` (games finished) or `win` (games won) ' +
      '`target` games. `counter` counts the caller’s games towards it this week; the reward (`reward_type` `money`: `reward` units of the ' +
      'currency, in the ledger as kind `mission`; `item`: one item of prototype `reward`) is given by the game that reaches the target, once a ' +
      'week (`rewarded` 1 then). The week starts on Monday at 00:00 UTC, when every counter starts again; `ts_expire` is the next Monday.',
    auth: 'required',
    scope: 'stat',
    params: P.object({}),
    result: Type.Array(Mission),
    handler: async ({ services, caller }) => missionsOf(services, caller.userId),
  }),

  defineMethod({
    name: 'seasonpass.get',
    summary: "The caller's pass of the current season",
    description:
      `A season is the game ranks' season (\`--game-season-start\`, \`--game-season-days\`). The pass's level is the experience the caller earned in finished games of the season ` +
      `(10 a game, 20 more for a win) over ${SEASON_LEVEL_XP}, up to level ${SEASON_LEVELS}; with the season's games and wins.`,
    auth: 'required',
    scope: 'stat',
    params: P.object({}),
    result: SeasonPass,
    handler: async ({ services, caller }) => seasonPassOf(services, caller.userId),
  }),

  defineMethod({
    name: 'users.getTopWeek',
    summary: "The week's top players",
    description:
      'Players by the experience earned in the week’s finished games (`points`: 10 a game, 20 more for a win), then by wins, then by the ' +
      'older account; `top` is the caller’s place (position 0 before their first game of the week). The week starts on Monday at 00:00 UTC.',
    auth: 'required',
    scope: 'stat',
    params: P.object({
      offset: P.uint({ default: 0, maximum: 1_000_000, description: 'places to skip' }),
      count: P.uint({ default: 20, minimum: 1, maximum: MAX_TOP_PAGE, description: `places to answer, at most ${MAX_TOP_PAGE}` }),
    }),
    result: TopWeek,
    handler: async ({ services, caller }, params) => topWeekPage(services, caller.userId, params.offset, params.count),
  }),
];
