import type { Executor } from '../db/connection.js';
import type { GameEndEffects, GameResult } from '../game/index.js';
import { announceInventoriesChanged, insertGrantedItems } from '../inventory/index.js';
import { announceBalances, payMissionMoney } from '../market/index.js';
import type { Services } from '../services.js';
import { seasonOf, seasonPeriod, weekOf, weekPeriod } from './clock.js';
import { addToStats, advanceProgress, markRewarded, protoExists, selectMissions, type StoredMission } from './queries.js';

/** Kopecks in a unit of the currency: a money reward is in whole units. */
const KOPECKS = 100;

/**
 * Counts a finished game, in the transaction that ends it: each human player's game, win and
 * experience in the week's and the season's standings; one more towards each active mission
 * the result serves (`play`: every player; `win`: the winner) in the game's week; and the
 * reward of each mission whose target it reaches, given once (markRewarded). Money is paid
 * before items are given, each in ascending user order, as every transfer locks them.
 */
export async function countGameResult(services: Services, trx: Executor, result: GameResult): Promise<GameEndEffects> {
  const now = Math.floor(result.tsEnd / 1000);
  const week = weekOf(result.tsEnd);
  const season = seasonOf(services.config.games, result.tsEnd);
  const players = [...new Set(result.players)].sort((a, b) => a - b);
  for (const userId of players) {
    const won = userId === result.winner ? 1 : 0;
    const xp = result.xp.get(userId) ?? 0;
    await addToStats(trx, weekPeriod(week), userId, won, xp);
    await addToStats(trx, seasonPeriod(season), userId, won, xp);
  }
  const rewards: { userId: number; mission: StoredMission }[] = [];
  const missions = await selectMissions(trx, true);
  for (const userId of players)
    for (const mission of missions) {
      if (mission.goal === 'win' && userId !== result.winner) continue;
      const counter = await advanceProgress(trx, mission.mission_id, userId, week);
      if (counter < mission.target) continue;
      // An item whose prototype has since gone is not given: the reward waits for a later game, should the prototype return.
      if (mission.reward_type === 'item' && !(await protoExists(trx, mission.reward))) continue;
      if (await markRewarded(trx, mission.mission_id, userId, week, now)) rewards.push({ userId, mission });
    }
  const balances = new Map<number, number>();
  for (const { userId, mission } of rewards)
    if (mission.reward_type === 'money')
      balances.set(
        userId,
        await payMissionMoney(trx, userId, mission.reward * KOPECKS, `mission ${mission.mission_id}: ${mission.name}`, now),
      );
  const inventories = new Set<number>();
  for (const { userId, mission } of rewards)
    if (mission.reward_type === 'item') {
      await insertGrantedItems(trx, { userId, itemProtoId: mission.reward, copies: 1 }, now);
      inventories.add(userId);
    }
  return { balances, inventories: [...inventories] };
}

/** After the game's end committed: the players' new balances and inventories. */
export async function announceGameResult(services: Services, effects: GameEndEffects): Promise<void> {
  if (effects.balances.size > 0) await announceBalances(services, effects.balances);
  if (effects.inventories.length > 0) await announceInventoriesChanged(services, effects.inventories);
}
