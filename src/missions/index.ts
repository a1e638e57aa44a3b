import type { Domain } from '../api/method.js';
import { missionAdminMethods } from './admin-methods.js';
import { missionMethods } from './methods.js';

/** What finished games leave for the players: the week's missions and their rewards, the season's pass and the week's top. */
export const missionsDomain: Domain = {
  name: 'missions',
  methods: [...missionMethods, ...missionAdminMethods],
};

// What the other folders use of this one.
// clock.ts
export { SEASON_LEVEL_XP, SEASON_LEVELS, weekEnd, weekOf } from './clock.js';
// progress.ts
export { announceGameResult, countGameResult } from './progress.js';
// admin-methods.ts
export { MAX_MISSION_MONEY, MAX_MISSION_TARGET } from './admin-methods.js';
// views.ts
export { Mission, missionsOf, SeasonPass, seasonPassOf, TopEntry, topWeekOf } from './views.js';
