import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * PostgreSQL: trade_create no longer records an offer that asks for items its sender may not
 * see: none from an inventory its owner's inventory privacy hides from the sender (`nobody`, or
 * `friends` and the sender is not a friend), and none of the stock class, which no one but the
 * owner sees. Nor one between users one of whom has blocked the other, or where either is
 * globally blocked, read under the parties' locks: the sender's row for update and the
 * receiver's for share, in user order, so that a block (which locks both) or a ban (which
 * updates the row) made meanwhile either comes first and refuses the offer, or comes after and
 * ends it. It answers null for all of them, as for anything else that would refuse the offer,
 * and the caller's transaction answers why without saying more about the items than
 * inventory.get would. Everything else is as in migration 013; the comparisons use variables for
 * the reason given in migration 012.
 */
export function tradeOfferAdmissionMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      if (dialect !== 'postgres') return;
      await sql`
        create or replace function trade_create(
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
          v_stock constant integer := 0;
          v_banned constant integer := 1;
          v_hidden constant text := 'nobody';
          v_friends_only constant text := 'friends';
          v_gift boolean := p_sides <@ array[v_side_from];
          v_income integer;
          v_from_friends integer;
          v_gifts integer;
          v_autoaccept integer;
          v_inventory text;
          v_trade_id bigint;
        begin
          if p_from < p_to then
            perform 1 from users where user_id = p_from for update;
            perform 1 from users where user_id = p_to for share;
          else
            perform 1 from users where user_id = p_to for share;
            perform 1 from users where user_id = p_from for update;
          end if;
          if exists (select 1 from users where user_id = any(array[p_from, p_to]) and global_ban = v_banned)
              or exists (select 1 from blocks where user_id = p_from and blocked_user_id = p_to)
              or exists (select 1 from blocks where user_id = p_to and blocked_user_id = p_from) then
            return null;
          end if;
          if (select count(*) from trades where user_id_from = p_from and create_time > p_since) >= p_max_recent then
            return null;
          end if;
          if (select count(*) from trades where user_id_from = p_from and status = v_open and create_time > p_cutoff) >= p_max_open then
            return null;
          end if;
          select trades_income, trades_income_from_friends, trades_income_gifts, trades_income_gifts_autoaccept, inventory_privacy
            into v_income, v_from_friends, v_gifts, v_autoaccept, v_inventory from users where user_id = p_to;
          if not found or (v_gift and v_autoaccept = 1) then
            return null;
          end if;
          if not ((v_income = 1 and (v_from_friends = 0 or p_friends)) or (v_gift and v_gifts = 1)) then
            return null;
          end if;
          if not v_gift and (v_inventory = v_hidden or (v_inventory = v_friends_only and not p_friends)) then
            return null;
          end if;
          if (select count(*) from (
                select 1 from items i join unnest(p_item_ids, p_owners) as m (item_id, owner) on i.item_id = m.item_id
                where i.item_id = any(p_item_ids) and i.user_id = m.owner and i.state = v_owned and i.ts_can_trade <> -1 and i.ts_can_trade <= p_now
                  and (m.owner = p_from or i.quality_id > v_stock)
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
    },
  };
}
