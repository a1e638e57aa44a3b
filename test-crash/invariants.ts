import type { Database } from '../src/db/connection.js';
import { checkMarket } from '../src/market/index.js';
import { applyFriendOp, type MarketRecord, type PairState, type StormLog } from './storm.js';

/**
 * What must hold in the database after a crash and a restart, whatever moment the server
 * died at. Returns the violations (empty when everything holds).
 */
export async function checkInvariants(
  db: Database,
  log: StormLog,
  originalItemIds: number[],
  promocodes: Map<string, { item_proto_ids: number[]; max_uses?: number }> = new Map(),
  firstOwners: Map<number, number> = new Map(),
): Promise<string[]> {
  const problems: string[] = [];
  problems.push(...(await checkItems(db, log, originalItemIds)));
  problems.push(...(await checkTrades(db, log, firstOwners)));
  problems.push(...(await checkOpenings(db, log)));
  problems.push(...(await checkPromocodes(db, log, promocodes)));
  problems.push(...(await checkFriendships(db, log)));
  problems.push(...(await checkChat(db, log)));
  problems.push(...(await checkPrivateMessages(db, log)));
  problems.push(...(await checkMarketOperations(db, log)));
  return problems;
}

/**
 * Every item is owned, or consumed by exactly one recorded craft or opening, or revoked with
 * exactly one revocation; every item not in the world was made by one craft, one opening or
 * one promo code; every craft consumed ten items of one class and created one of the next; every
 * acknowledged craft and revocation is there; the per-user counts agree with the items.
 */
async function checkItems(db: Database, log: StormLog, originalItemIds: number[]): Promise<string[]> {
  const problems: string[] = [];
  const k = db.kysely;
  const [items, crafts, revocations, counts, draws, uses, shopAndQuickSales] = await Promise.all([
    k.selectFrom('items').selectAll().execute(),
    k.selectFrom('crafts').selectAll().execute(),
    k.selectFrom('revocations').selectAll().execute(),
    k.selectFrom('inventory_counts').selectAll().execute(),
    k.selectFrom('draws').selectAll().execute(),
    k.selectFrom('promocode_uses').selectAll().execute(),
    k.selectFrom('ledger_transfers').select(['transfer_id', 'kind', 'item_id']).where('kind', 'in', ['shop', 'quick_sell']).execute(),
  ]);
  const itemById = new Map(items.map((i) => [Number(i.item_id), i]));
  const consumedBy = new Map<number, number>();
  const craftByResult = new Map<number, (typeof crafts)[number]>();
  for (const craft of crafts) {
    const consumed = JSON.parse(craft.consumed_item_ids) as number[];
    if (new Set(consumed).size !== 10) problems.push(`craft ${craft.craft_id} consumed ${consumed.length} items`);
    const qualities = new Set<number>();
    for (const id of consumed) {
      if (consumedBy.has(id)) problems.push(`item ${id} consumed by crafts ${consumedBy.get(id)} and ${craft.craft_id}`);
      consumedBy.set(id, Number(craft.craft_id));
      const item = itemById.get(id);
      if (!item) {
        problems.push(`craft ${craft.craft_id} consumed item ${id}, which does not exist`);
        continue;
      }
      qualities.add(item.quality_id);
      if (item.state !== 'consumed' || Number(item.craft_id) !== Number(craft.craft_id) || item.user_id !== craft.user_id)
        problems.push(`item ${id} of craft ${craft.craft_id} is ${item.state} (craft_id ${item.craft_id}, user ${item.user_id})`);
    }
    if (craft.result_item_id === null) {
      problems.push(`craft ${craft.craft_id} has no result`);
      continue;
    }
    craftByResult.set(Number(craft.result_item_id), craft);
    const result = itemById.get(Number(craft.result_item_id));
    if (!result || Number(result.created_by_craft_id) !== Number(craft.craft_id) || result.user_id !== craft.user_id) {
      problems.push(`craft ${craft.craft_id}: its result ${craft.result_item_id} is missing or not marked as made by it`);
    } else if (qualities.size !== 1 || result.quality_id !== [...qualities][0]! + 1) {
      problems.push(`craft ${craft.craft_id}: classes ${[...qualities]} became class ${result.quality_id}`);
    }
  }
  const made = new Map<number, string>();
  for (const craft of crafts) if (craft.result_item_id !== null) made.set(Number(craft.result_item_id), `craft ${craft.craft_id}`);
  for (const draw of draws) {
    for (const id of [draw.case_item_id, draw.key_item_id]) {
      if (id === null) continue;
      if (consumedBy.has(Number(id)))
        problems.push(`item ${id} consumed twice (craft ${consumedBy.get(Number(id))}, draw ${draw.draw_id})`);
      consumedBy.set(Number(id), -Number(draw.draw_id));
      const item = itemById.get(Number(id));
      if (!item || item.state !== 'consumed' || item.user_id !== draw.user_id || item.craft_id !== null)
        problems.push(`item ${id} opened by draw ${draw.draw_id} is ${item?.state} (user ${item?.user_id})`);
    }
    for (const id of JSON.parse(draw.result_item_ids) as number[]) {
      if (made.has(id)) problems.push(`item ${id} made by ${made.get(id)} and by draw ${draw.draw_id}`);
      made.set(id, `draw ${draw.draw_id}`);
    }
  }
  for (const use of uses)
    for (const id of JSON.parse(use.item_ids) as number[]) {
      if (made.has(id)) problems.push(`item ${id} made by ${made.get(id)} and by promo code ${use.code}`);
      made.set(id, `promo code ${use.code}`);
    }
  for (const t of shopAndQuickSales) {
    const id = Number(t.item_id);
    if (t.kind === 'shop') {
      if (made.has(id)) problems.push(`item ${id} made by ${made.get(id)} and by shop purchase ${t.transfer_id}`);
      made.set(id, `shop purchase ${t.transfer_id}`);
    } else {
      if (consumedBy.has(id)) problems.push(`item ${id} consumed twice (${consumedBy.get(id)}, quick sale ${t.transfer_id})`);
      consumedBy.set(id, -1_000_000_000 - Number(t.transfer_id));
      if (itemById.get(id)?.state !== 'consumed')
        problems.push(`item ${id} quick-sold by transfer ${t.transfer_id} is ${itemById.get(id)?.state}`);
    }
  }
  const revokedItems = new Map<number, number>();
  for (const r of revocations) revokedItems.set(r.item_id, (revokedItems.get(r.item_id) ?? 0) + 1);

  const expectedIds = new Set([...originalItemIds, ...made.keys()]);
  for (const item of items) {
    const id = Number(item.item_id);
    if (!expectedIds.has(id))
      problems.push(`item ${id} appeared from nowhere (not in the world, not made by a craft, an opening, a promo code or the shop)`);
    const held = item.state === 'owned' || item.state === 'listed';
    const fates = [held, consumedBy.has(id), revokedItems.get(id) === 1].filter(Boolean).length;
    if (fates !== 1 || (revokedItems.get(id) ?? 0) > 1)
      problems.push(
        `item ${id} (${item.state}) has ${fates} fates: consumed by ${consumedBy.get(id) ?? 'none'}, revocations ${revokedItems.get(id) ?? 0}`,
      );
    if (item.state === 'revoked' && !revokedItems.has(id)) problems.push(`item ${id} is revoked without a revocation record`);
    if (item.state === 'owned' && item.craft_id !== null) problems.push(`owned item ${id} names craft ${item.craft_id}`);
  }
  for (const id of originalItemIds) if (!itemById.has(id)) problems.push(`item ${id} of the world is gone`);

  for (const acked of log.crafts) {
    const craft = craftByResult.get(acked.resultItemId);
    if (!craft) {
      problems.push(`acknowledged craft of ${acked.itemIds} into ${acked.resultItemId} is not recorded`);
      continue;
    }
    const consumed = (JSON.parse(craft.consumed_item_ids) as number[]).sort((a, b) => a - b).join(',');
    if (craft.user_id !== acked.userId || consumed !== [...acked.itemIds].sort((a, b) => a - b).join(','))
      problems.push(`acknowledged craft into ${acked.resultItemId} is recorded as user ${craft.user_id} consuming ${consumed}`);
  }
  for (const itemId of log.revocations) {
    if (revokedItems.get(itemId) !== 1 || itemById.get(itemId)?.state !== 'revoked')
      problems.push(`acknowledged revocation of item ${itemId} is not there (${itemById.get(itemId)?.state})`);
  }

  const owned = new Map<number, { owned: number; stock: number }>();
  for (const item of items) {
    if (item.state !== 'owned') continue;
    const entry = owned.get(item.user_id) ?? { owned: 0, stock: 0 };
    entry.owned++;
    if (item.quality_id === 0) entry.stock++;
    owned.set(item.user_id, entry);
  }
  const counted = new Map(counts.map((c) => [c.user_id, c]));
  for (const userId of new Set([...owned.keys(), ...counted.keys()])) {
    const real = owned.get(userId) ?? { owned: 0, stock: 0 };
    const row = counted.get(userId) ?? { owned: 0, stock: 0 };
    if (Number(row.owned) !== real.owned || Number(row.stock) !== real.stock)
      problems.push(`inventory count of user ${userId} says ${row.owned}/${row.stock}, the items ${real.owned}/${real.stock}`);
  }
  return problems;
}

/**
 * Every acknowledged opening is recorded with what it answered, once per request id; every
 * recorded opening was acknowledged, or in flight at the crash; its result is the receiver's.
 */
async function checkOpenings(db: Database, log: StormLog): Promise<string[]> {
  const problems: string[] = [];
  const draws = await db.kysely.selectFrom('draws').selectAll().execute();
  const byRequest = new Map<string, (typeof draws)[number]>();
  for (const draw of draws) {
    const key = `${draw.user_id}:${draw.request_id}`;
    if (byRequest.has(key)) problems.push(`request ${key} opened twice`);
    byRequest.set(key, draw);
  }
  const acked = new Set<string>();
  for (const opening of log.openings) {
    const key = `${opening.userId}:${opening.requestId}`;
    acked.add(key);
    const draw = byRequest.get(key);
    if (!draw) {
      problems.push(`acknowledged opening ${key} of case ${opening.caseItemId} is not recorded`);
      continue;
    }
    if (
      Number(draw.case_item_id) !== opening.caseItemId ||
      Number(draw.key_item_id) !== opening.keyItemId ||
      draw.result_item_ids !== JSON.stringify(opening.resultItemIds)
    )
      problems.push(`acknowledged opening ${key} is recorded differently: ${JSON.stringify(draw)}`);
  }
  for (const key of byRequest.keys())
    if (!acked.has(key)) problems.push(`opening ${key} is recorded but was never acknowledged, not even on retry`);
  return problems;
}

/**
 * A code's count of uses equals its use rows and never passes its limit; each use granted
 * the code's items to its user; every acknowledged redemption is recorded; every recorded one
 * was acknowledged or in flight at the crash.
 */
async function checkPromocodes(
  db: Database,
  log: StormLog,
  promocodes: Map<string, { item_proto_ids: number[]; max_uses?: number }>,
): Promise<string[]> {
  const problems: string[] = [];
  const [codes, uses, items] = await Promise.all([
    db.kysely.selectFrom('promocodes').selectAll().execute(),
    db.kysely.selectFrom('promocode_uses').selectAll().execute(),
    db.kysely.selectFrom('items').select(['item_id', 'user_id', 'item_proto_id']).execute(),
  ]);
  const itemById = new Map(items.map((i) => [Number(i.item_id), i]));
  for (const code of codes) {
    const rows = uses.filter((u) => u.code === code.code);
    if (Number(code.uses) !== rows.length) problems.push(`promo code ${code.code} counts ${code.uses} uses, ${rows.length} are recorded`);
    const limit = promocodes.get(code.code)?.max_uses;
    if (limit !== undefined && rows.length > limit)
      problems.push(`promo code ${code.code} was used ${rows.length} times, its limit is ${limit}`);
  }
  for (const use of uses) {
    const granted = (JSON.parse(use.item_ids) as number[]).map((id) => itemById.get(id));
    const protos = granted.map((item) => (item && item.user_id === use.user_id ? item.item_proto_id : -1));
    if (JSON.stringify(protos) !== JSON.stringify(promocodes.get(use.code)?.item_proto_ids))
      problems.push(`promo code ${use.code} gave user ${use.user_id} prototypes ${protos}`);
  }
  const recorded = new Set(uses.map((u) => `${u.user_id}:${u.code}`));
  const allowed = new Set([...log.redemptions, ...log.pendingRedemptions].map((r) => `${r.userId}:${r.code}`));
  for (const redemption of log.redemptions) {
    const key = `${redemption.userId}:${redemption.code}`;
    if (!recorded.has(key)) problems.push(`acknowledged redemption ${key} is not recorded`);
    const use = uses.find((u) => u.user_id === redemption.userId && u.code === redemption.code);
    if (use && use.item_ids !== JSON.stringify(redemption.itemIds))
      problems.push(`redemption ${key} is recorded with items ${use.item_ids}, answered ${redemption.itemIds}`);
  }
  for (const key of recorded)
    if (!allowed.has(key)) problems.push(`redemption ${key} is recorded but was never acknowledged nor in flight`);
  return problems;
}

/**
 * No trade is half done: an accepted trade moved every one of its items (its moves in the
 * ledger are exactly its items, each from its side to the other), any other moved none.
 * The ledger, replayed from the first owners in order, gives every item's owner (of the
 * items whose first owner is given). Every
 * acknowledged trade is there, an acknowledged accept as accepted; an open trade holds only
 * items its sides still own.
 */
async function checkTrades(db: Database, log: StormLog, firstOwners: Map<number, number>): Promise<string[]> {
  const problems: string[] = [];
  const k = db.kysely;
  const [items, crafts, trades, entries, moves, sales, shopped] = await Promise.all([
    k.selectFrom('items').select(['item_id', 'user_id', 'state']).execute(),
    k.selectFrom('crafts').select(['user_id', 'result_item_id']).execute(),
    k.selectFrom('trades').selectAll().execute(),
    k.selectFrom('trade_items').selectAll().execute(),
    k.selectFrom('trade_moves').selectAll().orderBy('move_id').execute(),
    k.selectFrom('market_sales').selectAll().orderBy('sale_id').execute(),
    k
      .selectFrom('ledger_transfers as t')
      .innerJoin('ledger_entries as e', 'e.transfer_id', 't.transfer_id')
      .select(['t.item_id', 'e.account_id'])
      .where('t.kind', '=', 'shop')
      .where('e.account_id', '>', 0)
      .execute(),
  ]);
  const owner = new Map(firstOwners);
  for (const craft of crafts) if (craft.result_item_id !== null) owner.set(Number(craft.result_item_id), craft.user_id);
  for (const move of moves) {
    if (owner.get(move.item_id) !== move.from_user_id)
      problems.push(
        `move ${move.move_id} of item ${move.item_id} (trade ${move.trade_id}) leaves user ${move.from_user_id}, which did not own it`,
      );
    owner.set(move.item_id, move.to_user_id);
  }
  // The market's items never enter trades in the storm: their sales replay after the moves.
  for (const purchase of shopped) owner.set(Number(purchase.item_id), Number(purchase.account_id));
  for (const sale of sales) {
    if (owner.get(Number(sale.item_id)) !== Number(sale.seller_id))
      problems.push(`sale ${sale.sale_id} of item ${sale.item_id} is from user ${sale.seller_id}, which did not own it`);
    owner.set(Number(sale.item_id), Number(sale.buyer_id));
  }
  for (const item of items)
    if (owner.has(item.item_id) && owner.get(item.item_id) !== item.user_id)
      problems.push(`item ${item.item_id} belongs to user ${item.user_id}; the ledger says ${owner.get(item.item_id)}`);

  const tradeById = new Map(trades.map((t) => [t.trade_id, t]));
  const key = (itemId: number, from: number, to: number) => `${itemId}:${from}>${to}`;
  const expected = new Map<number, string[]>();
  for (const e of entries) {
    const trade = tradeById.get(e.trade_id);
    if (!trade) {
      problems.push(`items of trade ${e.trade_id}, which does not exist`);
      continue;
    }
    const [from, to] = e.side === 0 ? [trade.user_id_from, trade.user_id_to] : [trade.user_id_to, trade.user_id_from];
    (expected.get(e.trade_id) ?? expected.set(e.trade_id, []).get(e.trade_id)!).push(key(e.item_id, from, to));
  }
  const moved = new Map<number, string[]>();
  for (const m of moves)
    (moved.get(m.trade_id) ?? moved.set(m.trade_id, []).get(m.trade_id)!).push(key(m.item_id, m.from_user_id, m.to_user_id));
  const itemById = new Map(items.map((i) => [i.item_id, i]));
  for (const trade of trades) {
    const want = (expected.get(trade.trade_id) ?? []).sort().join(',');
    const got = (moved.get(trade.trade_id) ?? []).sort().join(',');
    if (trade.status === 1 && got !== want) problems.push(`accepted trade ${trade.trade_id} moved [${got}], its items are [${want}]`);
    if (trade.status !== 1 && got !== '') problems.push(`trade ${trade.trade_id} with status ${trade.status} moved [${got}]`);
    if (trade.status === 0)
      for (const e of entries.filter((x) => x.trade_id === trade.trade_id)) {
        const side = e.side === 0 ? trade.user_id_from : trade.user_id_to;
        const item = itemById.get(e.item_id);
        if (item?.state !== 'owned' || item.user_id !== side)
          problems.push(`open trade ${trade.trade_id} holds item ${e.item_id}, which its side no longer owns`);
      }
  }
  for (const acked of log.trades) {
    const trade = tradeById.get(acked.tradeId);
    if (!trade) problems.push(`acknowledged trade ${acked.tradeId} is gone`);
    else if (acked.accepted && trade.status !== 1)
      problems.push(`acknowledged accept of trade ${acked.tradeId} is undone (status ${trade.status})`);
    else if (trade.user_id_from !== acked.from || trade.user_id_to !== acked.to)
      problems.push(`trade ${acked.tradeId} is stored between other users`);
  }
  return problems;
}

/**
 * Friendships are stored in both directions, never next to a request between the same two
 * users, requests never go both ways at once, and each pair is as its last acknowledged
 * operation left it, or as the operation in flight at the crash would have.
 */
async function checkFriendships(db: Database, log: StormLog): Promise<string[]> {
  const problems: string[] = [];
  const [friendships, requests] = await Promise.all([
    db.kysely.selectFrom('friendships').selectAll().execute(),
    db.kysely.selectFrom('friend_requests').selectAll().execute(),
  ]);
  const friendKeys = new Set(friendships.map((f) => `${f.user_id}>${f.friend_id}`));
  const requestKeys = new Set(requests.map((r) => `${r.from_user_id}>${r.to_user_id}`));
  for (const f of friendships) {
    if (!friendKeys.has(`${f.friend_id}>${f.user_id}`)) problems.push(`friendship ${f.user_id} -> ${f.friend_id} has no reverse`);
    if (requestKeys.has(`${f.user_id}>${f.friend_id}`))
      problems.push(`users ${f.user_id} and ${f.friend_id} are friends and a request is pending`);
  }
  for (const r of requests)
    if (requestKeys.has(`${r.to_user_id}>${r.from_user_id}`))
      problems.push(`requests go both ways between ${r.from_user_id} and ${r.to_user_id}`);

  for (const pair of log.pairs) {
    const stored: PairState = friendKeys.has(`${pair.a}>${pair.b}`)
      ? 'friends'
      : requestKeys.has(`${pair.a}>${pair.b}`)
        ? 'a_asked'
        : requestKeys.has(`${pair.b}>${pair.a}`)
          ? 'b_asked'
          : 'none';
    const allowed = new Set<PairState>([pair.confirmed]);
    if (pair.pending) allowed.add(applyFriendOp(pair.confirmed, pair.pending));
    if (!allowed.has(stored))
      problems.push(
        `pair ${pair.a}/${pair.b} is ${stored} after ${pair.acked} acknowledged changes; expected ${[...allowed].join(' or ')}`,
      );
  }
  return problems;
}

/** Every acknowledged kept message is stored as sent; `!` messages are not; deletions stuck. */
async function checkChat(db: Database, log: StormLog): Promise<string[]> {
  const problems: string[] = [];
  const rows = await db.kysely.selectFrom('chat_messages').select(['msg_id', 'user_id', 'text', 'deleted_at']).execute();
  const byId = new Map(rows.map((r) => [r.msg_id, r]));
  if (byId.size !== rows.length) problems.push('two chat messages share a msg_id');
  for (const message of log.messages) {
    const row = byId.get(message.msgId);
    if (!message.kept) {
      if (row) problems.push(`message ${message.msgId} starting with ! was kept`);
      continue;
    }
    if (!row) {
      problems.push(`acknowledged message ${message.msgId} of user ${message.userId} is gone`);
      continue;
    }
    if (row.user_id !== message.userId || row.text !== message.text) problems.push(`message ${message.msgId} is stored differently`);
    const deleted = row.deleted_at !== null;
    if (log.deletions.has(message.msgId) && !deleted) problems.push(`acknowledged deletion of ${message.msgId} is undone`);
    if (!log.deletions.has(message.msgId) && !log.pendingDeletions.has(message.msgId) && deleted)
      problems.push(`message ${message.msgId} is deleted though nobody deleted it`);
  }
  return problems;
}

/**
 * Every acknowledged private message, and every one in flight at the kill once sent again, is
 * stored as sent, once per send_id, under the msg_id its sender was answered; acknowledged ones
 * have increasing ids; each conversation's unread counter equals its unread messages.
 */
async function checkPrivateMessages(db: Database, log: StormLog): Promise<string[]> {
  const problems: string[] = [];
  const rows = await db.kysely.selectFrom('im_messages').selectAll().execute();
  const byId = new Map(rows.map((r) => [r.msg_id, r]));
  const sendIds = new Set(rows.map((r) => `${r.sender_id}:${r.send_id}`));
  if (sendIds.size !== rows.length) problems.push('two private messages share a send_id');
  for (const message of [...log.privateMessages, ...log.retriedPrivateMessages]) {
    const row = byId.get(message.msgId);
    if (!row) problems.push(`acknowledged private message ${message.msgId} of user ${message.from} is gone`);
    else if (
      row.sender_id !== message.from ||
      row.receiver_id !== message.to ||
      row.text !== message.text ||
      row.send_id !== message.sendId
    )
      problems.push(`private message ${message.msgId} is stored differently`);
  }
  const lastOf = new Map<number, number>();
  for (const message of log.privateMessages) {
    if (message.msgId <= (lastOf.get(message.from) ?? 0))
      problems.push(`private message ${message.msgId} of user ${message.from} did not get a higher id`);
    lastOf.set(message.from, message.msgId);
  }
  const unread = new Map<string, number>();
  for (const row of rows)
    if (row.is_read === 0 && row.deleted_at === null)
      unread.set(`${row.receiver_id}:${row.sender_id}`, (unread.get(`${row.receiver_id}:${row.sender_id}`) ?? 0) + 1);
  const dialogs = await db.kysely.selectFrom('im_dialogs').selectAll().execute();
  for (const dialog of dialogs) {
    const key = `${dialog.user_id}:${dialog.partner_id}`;
    if (dialog.new_counter !== (unread.get(key) ?? 0))
      problems.push(`user ${dialog.user_id} counts ${dialog.new_counter} unread from ${dialog.partner_id}; ${unread.get(key) ?? 0} are`);
    unread.delete(key);
  }
  for (const key of unread.keys()) problems.push(`unread private messages ${key} have no conversation`);
  return problems;
}

/**
 * The market: the ledger and the listings check (balances equal their entries, transfers sum
 * to zero, the fee account holds the fees, listed items are held); no balance below zero;
 * every acknowledged sale, purchase, shop purchase and quick sale is there once, and nothing
 * is there that was neither acknowledged nor in flight at the kill.
 */
async function checkMarketOperations(db: Database, log: StormLog): Promise<string[]> {
  const k = db.kysely;
  const problems = (await checkMarket(k)).map((problem) => `market: ${problem}`);
  const [balances, sales, listings, transfers, shopRequests] = await Promise.all([
    k.selectFrom('balances').selectAll().execute(),
    k.selectFrom('market_sales').selectAll().execute(),
    k.selectFrom('market_listings').selectAll().execute(),
    k
      .selectFrom('ledger_transfers as t')
      .innerJoin('ledger_entries as e', 'e.transfer_id', 't.transfer_id')
      .select(['t.transfer_id', 't.kind', 't.item_id', 'e.account_id'])
      .where('t.kind', 'in', ['shop', 'quick_sell'])
      .where('e.account_id', '>', 0)
      .execute(),
    k.selectFrom('shop_purchases').selectAll().execute(),
  ]);
  for (const b of balances) if (Number(b.balance) < 0) problems.push(`user ${b.user_id} is overdrawn: ${b.balance}`);

  /** Stored records by key, each taken once by what explains it. */
  const counted = (keys: string[]) => {
    const counts = new Map<string, number>();
    for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
    return counts;
  };
  const take = (counts: Map<string, number>, key: string) => {
    const n = counts.get(key) ?? 0;
    if (n > 0) counts.set(key, n - 1);
    return n > 0;
  };
  const storedSales = counted(sales.map((s) => `${s.item_id}:${s.buyer_id}:${s.price}`));
  const storedShop = counted(transfers.filter((t) => t.kind === 'shop').map((t) => `${t.account_id}:${t.item_id}`));
  const storedQuick = counted(transfers.filter((t) => t.kind === 'quick_sell').map((t) => `${t.account_id}:${t.item_id}`));
  const requests = new Set(shopRequests.map((r) => `${r.user_id}:${r.request_id}`));
  for (const record of log.market) {
    if (record.op === 'buy' && !take(storedSales, `${record.itemId}:${record.userId}:${record.price}`))
      problems.push(`acknowledged purchase of item ${record.itemId} by user ${record.userId} at ${record.price} is not recorded once`);
    if (record.op === 'shop') {
      if (!take(storedShop, `${record.userId}:${record.itemId}`))
        problems.push(`acknowledged shop purchase ${record.requestId} (item ${record.itemId}) is not in the ledger once`);
      if (!requests.has(`${record.userId}:${record.requestId}`))
        problems.push(`acknowledged shop purchase ${record.requestId} has no request record`);
    }
    if (record.op === 'quickSell' && !take(storedQuick, `${record.userId}:${record.itemId}`))
      problems.push(`acknowledged quick sale of item ${record.itemId} by user ${record.userId} is not in the ledger once`);
  }
  // What is left must be explained by the operation each client had in flight at the kill.
  for (const record of log.pendingMarket) {
    if (record.op === 'buy') take(storedSales, `${record.itemId}:${record.userId}:${record.price}`);
    if (record.op === 'quickSell') take(storedQuick, `${record.userId}:${record.itemId}`);
  }
  for (const [what, left] of [
    ['sale', storedSales],
    ['shop purchase', storedShop],
    ['quick sale', storedQuick],
  ] as const)
    for (const [key, n] of left) if (n > 0) problems.push(`${n} ${what}(s) ${key} recorded but never acknowledged nor in flight`);
  if (shopRequests.length !== transfers.filter((t) => t.kind === 'shop').length)
    problems.push(
      `${shopRequests.length} shop requests recorded, ${transfers.filter((t) => t.kind === 'shop').length} shop purchases in the ledger`,
    );

  // Listings as the clients left them: an item only ever sold (listed or repriced) by its owner is
  // on sale at one of those prices; an item on sale was listed by an acknowledged or pending sell.
  const opsOf = new Map<number, MarketRecord[]>();
  for (const record of [...log.market, ...log.pendingMarket])
    if (record.op !== 'shop') (opsOf.get(record.itemId) ?? opsOf.set(record.itemId, []).get(record.itemId)!).push(record);
  const stored = new Map(listings.map((l) => [Number(l.item_id), l]));
  for (const [itemId, ops] of opsOf) {
    const onlySold = ops.every((r) => r.op === 'sell');
    const ackedSell = log.market.some((r) => r.op === 'sell' && r.itemId === itemId);
    const listing = stored.get(itemId);
    if (onlySold && ackedSell) {
      const prices = ops.map((r) => (r.op === 'sell' ? r.price : -1));
      if (!listing) problems.push(`acknowledged listing of item ${itemId} is gone though nothing else was done with it`);
      else if (!prices.includes(Number(listing.price))) problems.push(`item ${itemId} is on sale at ${listing.price}, sold at ${prices}`);
    }
  }
  for (const [itemId, listing] of stored)
    if (!(opsOf.get(itemId) ?? []).some((r) => r.op === 'sell' && r.userId === Number(listing.seller_id)))
      problems.push(`item ${itemId} is on sale by user ${listing.seller_id}, who never sold it`);
  return problems;
}
