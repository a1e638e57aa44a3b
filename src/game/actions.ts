import { ApiError, Code } from '../api/errors.js';
import type { Action } from './engine/index.js';

/** An action as sent over HTTP or the game server's WebSocket (game.action's parameters). */
export interface SentAction {
  action: string;
  field_id?: number;
  user_id_to?: number;
  give_field_ids?: string;
  give_cash?: number;
  take_field_ids?: string;
  take_cash?: number;
}

function readFieldIds(text: string | undefined, name: string): number[] {
  if (!text) return [];
  const ids = text.split(',').map((x) => Number(x));
  if (ids.length > 40 || !ids.every((x) => Number.isInteger(x) && x >= 0 && x < 1000))
    throw new ApiError(Code.BAD_PARAM, `parameter ${name}: a list of at most 40 field ids`);
  return ids;
}

/** The engine's action for the parameters sent; 2 for one that lacks what its action needs. */
export function actionOf(sent: SentAction): Action {
  if (sent.action === 'contract.send') {
    if (sent.user_id_to === undefined) throw new ApiError(Code.BAD_PARAM, 'parameter user_id_to: required for contract.send');
    return {
      type: 'contract.send',
      user_id_to: sent.user_id_to,
      give: { field_ids: readFieldIds(sent.give_field_ids, 'give_field_ids'), cash: sent.give_cash ?? 0 },
      take: { field_ids: readFieldIds(sent.take_field_ids, 'take_field_ids'), cash: sent.take_cash ?? 0 },
    };
  }
  if (['level.build', 'level.sell', 'mortgage.put', 'mortgage.buyback'].includes(sent.action)) {
    if (sent.field_id === undefined) throw new ApiError(Code.BAD_PARAM, `parameter field_id: required for ${sent.action}`);
    return { type: sent.action as 'level.build', field_id: sent.field_id };
  }
  return { type: sent.action } as Action;
}
