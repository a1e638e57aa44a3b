import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * PostgreSQL: a trade's creation and its acceptance as functions, each one statement (and one
 * round trip) that takes its locks, checks and writes in one transaction. Their locks come in
 * the order every other writer of items and trades takes them (items in id order, then
 * inventory counts in user order, then trades in id order); see src/trades/settle.ts.
 *
 * trade_create: the sender's row (their open trades are counted under it), then the items,
 * shared in id order. It inserts the trade only when everything the caller checked still holds:
 * fewer than `max_open` open trades, the receiver's settings as read, every item its side's,
 * owned, tradable now and not equipped. Null otherwise, nothing written.
 *
 * Both plan their statements on every call (plan_cache_mode), with the values of that call: a plan
 * kept from the first calls, made while the trade tables were small, would scan them whole once
 * they have grown. Migration 012 replaces both with functions that keep their plans and read
 * every row by key.
 * The other trades holding the items are read from trade_items first, and then found by id: the
 * index of open trades holds a dead entry for every trade that left `open` until the table is
 * vacuumed, and a busy server would read thousands of them on each acceptance.
 *
 * trade_accept locks both parties' rows of inventory_counts (created when missing) in user order
 * before anything moves: the triggers that keep the counts change them with every item that
 * moves, in no particular order, and two trades between the same users the other way round
 * would otherwise lock them crosswise. It answers `closed` when the trade was no longer open,
 * `invalid` (and the trade is made invalid) when an item is no longer its side's, tradable and as
 * offered (`expected` data) or `tradable` is false, else `accepted` and one `invalidated` row per
 * other open trade that held a moved item. Each move is recorded in trade_moves.
 */
export function tradeFunctionsMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      if (dialect !== 'postgres') return;
      await sql`
        create function trade_create(
          p_from bigint, p_to bigint, p_now bigint, p_cutoff bigint, p_max_open bigint, p_settings integer[],
          p_item_ids bigint[], p_sides integer[], p_owners bigint[]
        ) returns bigint language plpgsql set plan_cache_mode = force_custom_plan as $$
        #variable_conflict use_column
        declare
          v_trade_id bigint;
        begin
          perform 1 from users where user_id = p_from for update;
          if (select count(*) from trades where user_id_from = p_from and status = 0 and create_time > p_cutoff) >= p_max_open then
            return null;
          end if;
          if (select array[trades_income, trades_income_from_friends, trades_income_gifts, trades_income_gifts_autoaccept]
              from users where user_id = p_to) is distinct from p_settings then
            return null;
          end if;
          if (select count(*) from (
                select 1 from items i join unnest(p_item_ids, p_owners) as m (item_id, owner) on i.item_id = m.item_id
                where i.user_id = m.owner and i.state = 'owned' and i.ts_can_trade <> -1 and i.ts_can_trade <= p_now
                  and not exists (select 1 from equipped e where e.item_id = i.item_id)
                order by i.item_id for share of i) checked) <> cardinality(p_item_ids) then
            return null;
          end if;
          insert into trades (user_id_from, user_id_to, status, create_time, reaction_time)
            values (p_from, p_to, 0, p_now, null) returning trade_id into v_trade_id;
          insert into trade_items (trade_id, item_id, side, user_id, item_proto_id, ts_owned, ts_can_trade, data)
            select v_trade_id, i.item_id, m.side, i.user_id, i.item_proto_id, i.ts_owned, i.ts_can_trade, i.data
            from items i join unnest(p_item_ids, p_sides) as m (item_id, side) on i.item_id = m.item_id;
          return v_trade_id;
        end $$`.execute(db);

      await sql`
        create function trade_accept(
          p_trade_id bigint, p_from bigint, p_to bigint, p_now bigint, p_cutoff bigint, p_hold bigint, p_tradable boolean,
          p_item_ids bigint[], p_givers bigint[], p_receivers bigint[], p_expected text[], p_data text[]
        ) returns table (kind text, trade_id bigint, user_id_from bigint, user_id_to bigint) language plpgsql
        set plan_cache_mode = force_custom_plan as $$
        #variable_conflict use_column
        declare
          v_moved bigint;
          v_holding bigint[];
        begin
          perform 1 from items where item_id = any(p_item_ids) order by item_id for update;
          select coalesce(array_agg(ti.trade_id), '{}') into v_holding from trade_items ti
            where ti.item_id = any(p_item_ids) and ti.trade_id <> p_trade_id;
          insert into inventory_counts (user_id, owned, stock)
            select u, 0, 0 from unnest(array[least(p_from, p_to), greatest(p_from, p_to)]) as u order by u
            on conflict (user_id) do update set owned = inventory_counts.owned;
          update trades set status = 1, reaction_time = p_now
            where trade_id = p_trade_id and status = 0 and create_time > p_cutoff
              and trade_id in (
                select t.trade_id from trades t
                where t.trade_id = any(v_holding || p_trade_id) and (t.trade_id = p_trade_id or t.status = 0)
                order by t.trade_id for update);
          if not found then
            return query select 'closed'::text, p_trade_id, p_from, p_to;
            return;
          end if;
          if not p_tradable or (
              select count(*) from items i join unnest(p_item_ids, p_givers, p_expected) as m (item_id, giver, expected) on i.item_id = m.item_id
              where i.user_id = m.giver and i.state = 'owned' and i.ts_can_trade <> -1 and i.ts_can_trade <= p_now
                and i.data is not distinct from m.expected
                and not exists (select 1 from equipped e where e.item_id = i.item_id)) <> cardinality(p_item_ids) then
            update trades set status = 4 where trade_id = p_trade_id;
            return query select 'invalid'::text, p_trade_id, p_from, p_to;
            return;
          end if;
          with moved as (
            update items set user_id = m.receiver, ts_owned = p_now, data = m.data,
              ts_can_trade = case when p_hold > 0 then p_now + p_hold else items.ts_can_trade end
            from unnest(p_item_ids, p_givers, p_receivers, p_data) as m (item_id, giver, receiver, data)
            where items.item_id = m.item_id and items.user_id = m.giver and items.state = 'owned'
            returning items.item_id, m.giver, m.receiver
          )
          insert into trade_moves (trade_id, item_id, from_user_id, to_user_id, ts)
            select p_trade_id, item_id, giver, receiver, p_now from moved order by item_id;
          get diagnostics v_moved = row_count;
          if v_moved <> cardinality(p_item_ids) then
            raise exception 'an item changed during trade %', p_trade_id;
          end if;
          return query select 'accepted'::text, p_trade_id, p_from, p_to;
          return query
            with invalidated as (
              update trades set status = 4, reaction_time = p_now
              where trade_id = any(v_holding) and status = 0 and create_time > p_cutoff
              returning trade_id, user_id_from, user_id_to
            )
            select 'invalidated'::text, trade_id, user_id_from, user_id_to from invalidated;
        end $$`.execute(db);
    },
  };
}
