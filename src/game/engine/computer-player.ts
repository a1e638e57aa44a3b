/**
 * The built-in computer player: a simple strategy that only ever sends an action of the list it
 * is given. It buys what it can afford with a reserve left, bids up to a little over the price,
 * builds on its monopolies, offers cash for the last field of a monopoly it nearly has, and
 * raises cash by selling levels, then mortgaging, when a payment is due.
 */
import { buybackCost, buyPrice, groupFields, levelCost } from './config.js';
import { expected } from './engine.js';
import type { RandomSource } from './random.js';
import { buildRefusal, buybackRefusal, mortgageRefusal, ownedFields, playerById, sellRefusal, tradable } from './rules.js';
import type { Action, Game, Step } from './types.js';

const reserve = 1000;

function contractOffer(game: Game, userId: number, random: RandomSource): Action | null {
  const me = playerById(game, userId)!;
  for (const id of ownedFields(game, userId)) {
    for (const other of groupFields(game.config, id)) {
      const field = game.fields.get(other);
      if (!field || field.owner_user_id === userId || !tradable(game, other)) continue;
      const owner = playerById(game, field.owner_user_id);
      if (!owner || owner.status !== 0) continue;
      const cash = Math.round((buyPrice(game.config, other) * (12 + random.below(10))) / 10);
      if (me.cash - cash < reserve) continue;
      return { type: 'contract.send', user_id_to: owner.user_id, give: { field_ids: [], cash }, take: { field_ids: [other], cash: 0 } };
    }
  }
  return null;
}

function contractValue(game: Game, side: { field_ids: number[]; cash: number }): number {
  return side.cash + side.field_ids.reduce((sum, id) => sum + buyPrice(game.config, id), 0);
}

/** The computer's next action for `userId`, or null when nothing is expected of it. */
export function computerAction(game: Game, userId: number, random: RandomSource): Action | null {
  const exp = expected(game);
  if (exp.user_id !== userId) return null;
  const me = playerById(game, userId)!;
  const step: Step = game.step;
  const list = exp.list;
  switch (step.kind) {
    case 'contract': {
      const gain = contractValue(game, step.initiator) - contractValue(game, step.responder);
      return { type: gain >= 0 && me.cash >= step.responder.cash ? 'contract.accept' : 'contract.reject' };
    }
    case 'auction': {
      const next = step.leader === null ? step.bid : step.bid + game.config.mechanics.auction!.bid_increment;
      const limit = (buyPrice(game.config, step.field_id) * (8 + random.below(8))) / 10;
      return { type: list.includes('auction.bid') && next <= limit && me.cash - next >= reserve ? 'auction.bid' : 'auction.reject' };
    }
    case 'buy': {
      const price = buyPrice(game.config, step.field_id);
      if (list.includes('purchase') && me.cash - price >= reserve && random.below(10) > 0) return { type: 'purchase' };
      return { type: list.includes('auction.put') ? 'auction.put' : 'purchase.reject' };
    }
    case 'pay': {
      const pay = list[0]!;
      if (me.cash >= step.amount) return { type: pay } as Action;
      const own = ownedFields(game, userId);
      const sell = own.find((id) => sellRefusal(game, userId, id) === null);
      if (sell !== undefined) return { type: 'level.sell', field_id: sell };
      const mortgage = own.find((id) => mortgageRefusal(game, userId, id) === null);
      if (mortgage !== undefined) return { type: 'mortgage.put', field_id: mortgage };
      return { type: pay } as Action;
    }
    case 'roll': {
      if (list.includes('jail.release.pay') && me.cash > 4 * reserve && random.below(2) === 0) return { type: 'jail.release.pay' };
      const own = ownedFields(game, userId);
      if (list.includes('mortgage.buyback')) {
        const id = own.find((f) => buybackRefusal(game, userId, f) === null);
        if (id !== undefined && me.cash - buybackCost(game.config, id) >= 2 * reserve) return { type: 'mortgage.buyback', field_id: id };
      }
      if (list.includes('level.build')) {
        const id = own.find((f) => buildRefusal(game, userId, f) === null);
        if (id !== undefined && me.cash - levelCost(game.config, id) >= reserve) return { type: 'level.build', field_id: id };
      }
      if (list.includes('contract.send') && random.below(4) === 0) {
        const offer = contractOffer(game, userId, random);
        if (offer) return offer;
      }
      return { type: 'roll-dices' };
    }
    case 'over':
      return null;
  }
}
