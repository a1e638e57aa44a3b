import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * A sender's offers a minute are counted from the trades they made, by a new index of trades by
 * sender and time: only a recorded offer counts, and the count is read under the sender's lock
 * with everything else a new trade is checked against.
 *
 * PostgreSQL: trade_create now decides the whole admission of an offer itself (the sender's
 * offers in the window and open trades, the receiver's settings for a sender who is or is not a
 * friend, every item's owner, state, prototype, trade lock and equipment), so that an offer is
 * one call. It answers null, writing nothing, when anything would refuse the offer, and when a
 * gift completes at once: the caller then offers it in a transaction of its own, which answers
 * the exact refusal.
 *
 * PostgreSQL: trade_accept now reads the trade and its items itself, so that an acceptance is
 * one call too. It answers `none` when there is no such trade of the caller's and `forbidden`
 * when the caller is its sender; otherwise as before (migration 011 describes its locks). Each
 * item's data after the move is made by trade_data_after_move: the giver joins its earlier
 * owners, a gift says so, anything else clears it (the same members as the server writes on
 * SQLite, as PostgreSQL writes JSON).
 *
 * The functions' statements keep their plans and read every row by key, as migration 012
 * explains.
 */
export function tradeCreationWindowMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.createIndex('trades_by_sender_time').on('trades').columns(['user_id_from', 'create_time']).execute();
      if (dialect !== 'postgres') return;
      await sql`drop function trade_create(bigint, bigint, bigint, bigint, bigint, integer[], bigint[], integer[], bigint[])`.execute(db);
      await sql`
        create function trade_create(
          p_from bigint, p_to bigint, p_now bigint, p_cutoff bigint, p_max_open bigint, p_since bigint, p_max_recent bigint,
          p_friends boolean, p_item_ids bigint[], p_sides integer[], p_owners bigint[]
        ) returns bigint language plpgsql
        set plan_cache_mode = force_generic_plan set enable_seqscan = off as $$
        #variable_conflict use_column
        declare
          v_owned constant text := 'owned';
          v_open constant integer := 0;
          v_side_from constant integer := 0;
          v_never_tradable constant integer := 1;
          v_gift boolean := p_sides <@ array[v_side_from];
          v_income integer;
          v_from_friends integer;
          v_gifts integer;
          v_autoaccept integer;
          v_trade_id bigint;
        begin
          perform 1 from users where user_id = p_from for update;
          if (select count(*) from trades where user_id_from = p_from and create_time > p_since) >= p_max_recent then
            return null;
          end if;
          if (select count(*) from trades where user_id_from = p_from and status = v_open and create_time > p_cutoff) >= p_max_open then
            return null;
          end if;
          select trades_income, trades_income_from_friends, trades_income_gifts, trades_income_gifts_autoaccept
            into v_income, v_from_friends, v_gifts, v_autoaccept from users where user_id = p_to;
          if not found or (v_gift and v_autoaccept = 1) then
            return null;
          end if;
          if not ((v_income = 1 and (v_from_friends = 0 or p_friends)) or (v_gift and v_gifts = 1)) then
            return null;
          end if;
          if (select count(*) from (
                select 1 from items i join unnest(p_item_ids, p_owners) as m (item_id, owner) on i.item_id = m.item_id
                where i.item_id = any(p_item_ids) and i.user_id = m.owner and i.state = v_owned and i.ts_can_trade <> -1 and i.ts_can_trade <= p_now
                  and coalesce((select coalesce(p.item_proto_status, 0) from item_protos p where p.item_proto_id = i.item_proto_id),
                    v_never_tradable) <> v_never_tradable
                  and not exists (select 1 from equipped e where e.item_id = i.item_id)
                order by i.item_id for share of i) checked) <> cardinality(p_item_ids) then
            return null;
          end if;
          insert into trades (user_id_from, user_id_to, status, create_time, reaction_time)
            values (p_from, p_to, v_open, p_now, null) returning trade_id into v_trade_id;
          insert into trade_items (trade_id, item_id, side, user_id, item_proto_id, ts_owned, ts_can_trade, data)
            select v_trade_id, i.item_id, m.side, i.user_id, i.item_proto_id, i.ts_owned, i.ts_can_trade, i.data
            from items i join unnest(p_item_ids, p_sides) as m (item_id, side) on i.item_id = m.item_id
            where i.item_id = any(p_item_ids);
          return v_trade_id;
        end $$`.execute(db);

      await sql`
        create function trade_data_after_move(p_data text, p_giver bigint, p_receiver bigint, p_gift boolean, p_now bigint)
        returns text language plpgsql immutable as $$
        declare
          v jsonb := '{}';
          v_owners jsonb;
        begin
          if p_data is not null then
            begin
              v := p_data::jsonb;
            exception when invalid_text_representation then
              -- Unreadable per-item data is replaced by the provenance alone.
              v := '{}';
            end;
            if jsonb_typeof(v) <> 'object' then
              v := '{}';
            end if;
          end if;
          v_owners := case when jsonb_typeof(v -> 'previous_owners_user_ids') = 'array' then v -> 'previous_owners_user_ids' else '[]' end;
          v := v || jsonb_build_object('previous_owners_user_ids', v_owners || to_jsonb(p_giver));
          if p_gift then
            v := v || jsonb_build_object('gift', jsonb_build_object('from_user_id', p_giver, 'to_user_id', p_receiver, 'ts', p_now));
          else
            v := v - 'gift';
          end if;
          return v::text;
        end $$`.execute(db);

      await sql`drop function trade_accept(bigint, bigint, bigint, bigint, bigint, bigint, boolean, bigint[], bigint[], bigint[], text[], text[])`.execute(
        db,
      );
      await sql`
        create function trade_accept(p_trade_id bigint, p_caller bigint, p_now bigint, p_cutoff bigint, p_hold bigint)
        returns table (kind text, trade_id bigint, user_id_from bigint, user_id_to bigint) language plpgsql
        set plan_cache_mode = force_generic_plan set enable_seqscan = off as $$
        #variable_conflict use_column
        declare
          v_owned constant text := 'owned';
          v_open constant integer := 0;
          v_side_from constant integer := 0;
          v_never_tradable constant integer := 1;
          v_from bigint;
          v_to bigint;
          v_gift boolean;
          v_tradable boolean;
          v_item_ids bigint[];
          v_givers bigint[];
          v_receivers bigint[];
          v_expected text[];
          v_data text[];
          v_moved bigint;
          v_holding bigint[];
        begin
          select t.user_id_from, t.user_id_to into v_from, v_to from trades t where t.trade_id = p_trade_id;
          if not found or p_caller <> all(array[v_from, v_to]) then
            return query select 'none'::text, p_trade_id, v_from, v_to;
            return;
          end if;
          if p_caller <> v_to then
            return query select 'forbidden'::text, p_trade_id, v_from, v_to;
            return;
          end if;
          select coalesce(bool_and(ti.side = v_side_from), false) into v_gift from trade_items ti where ti.trade_id = p_trade_id;
          select coalesce(array_agg(e.item_id order by e.item_id), '{}'), coalesce(array_agg(e.giver order by e.item_id), '{}'),
              coalesce(array_agg(e.receiver order by e.item_id), '{}'), coalesce(array_agg(e.data order by e.item_id), '{}'),
              coalesce(array_agg(trade_data_after_move(e.data, e.giver, e.receiver, v_gift, p_now) order by e.item_id), '{}'),
              coalesce(bool_and(e.tradable), true)
            into v_item_ids, v_givers, v_receivers, v_expected, v_data, v_tradable
            from (
              select ti.item_id, ti.data,
                case when ti.side = v_side_from then v_from else v_to end as giver,
                case when ti.side = v_side_from then v_to else v_from end as receiver,
                coalesce((select coalesce(p.item_proto_status, 0) from item_protos p where p.item_proto_id = ti.item_proto_id),
                  v_never_tradable) <> v_never_tradable as tradable
              from trade_items ti where ti.trade_id = p_trade_id
            ) e;
          perform 1 from items where item_id = any(v_item_ids) order by item_id for update;
          select coalesce(array_agg(ti.trade_id), '{}') into v_holding from trade_items ti
            where ti.item_id = any(v_item_ids) and ti.trade_id <> p_trade_id;
          insert into inventory_counts (user_id, owned, stock)
            select u, 0, 0 from unnest(array[least(v_from, v_to), greatest(v_from, v_to)]) as u order by u
            on conflict (user_id) do update set owned = inventory_counts.owned;
          update trades set status = 1, reaction_time = p_now
            where trade_id = p_trade_id and status = v_open and create_time > p_cutoff
              and trade_id in (
                select t.trade_id from trades t
                where t.trade_id = any(v_holding || p_trade_id) and (t.trade_id = p_trade_id or t.status = v_open)
                order by t.trade_id for update);
          if not found then
            return query select 'closed'::text, p_trade_id, v_from, v_to;
            return;
          end if;
          if not v_tradable or (
              select count(*) from items i join unnest(v_item_ids, v_givers, v_expected) as m (item_id, giver, expected) on i.item_id = m.item_id
              where i.item_id = any(v_item_ids) and i.user_id = m.giver and i.state = v_owned and i.ts_can_trade <> -1 and i.ts_can_trade <= p_now
                and i.data is not distinct from m.expected
                and not exists (select 1 from equipped e where e.item_id = i.item_id)) <> cardinality(v_item_ids) then
            update trades set status = 4 where trade_id = p_trade_id;
            return query select 'invalid'::text, p_trade_id, v_from, v_to;
            return;
          end if;
          with moved as (
            update items set user_id = m.receiver, ts_owned = p_now, data = m.data,
              ts_can_trade = case when p_hold > 0 then p_now + p_hold else items.ts_can_trade end
            from unnest(v_item_ids, v_givers, v_receivers, v_data) as m (item_id, giver, receiver, data)
            where items.item_id = any(v_item_ids) and items.item_id = m.item_id and items.user_id = m.giver
              and items.state = v_owned
            returning items.item_id, m.giver, m.receiver
          )
          insert into trade_moves (trade_id, item_id, from_user_id, to_user_id, ts)
            select p_trade_id, item_id, giver, receiver, p_now from moved order by item_id;
          get diagnostics v_moved = row_count;
          if v_moved <> cardinality(v_item_ids) then
            raise exception 'an item changed during trade %', p_trade_id;
          end if;
          return query select 'accepted'::text, p_trade_id, v_from, v_to;
          return query
            with invalidated as (
              update trades set status = 4, reaction_time = p_now
              where trade_id = any(v_holding) and status = v_open and create_time > p_cutoff
              returning trade_id, user_id_from, user_id_to
            )
            select 'invalidated'::text, trade_id, user_id_from, user_id_to from invalidated;
        end $$`.execute(db);
    },
  };
}
