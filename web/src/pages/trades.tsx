import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { components } from '../api/schema';
import { useI18n, type Key } from '../i18n';
import { onFeedEvent } from '../realtime';
import { navigate, useLocation } from '../router';
import { Loading, Outcome, Page, UserRow, useAction, useLoad } from '../ui';
import { profilePath, usersById, type UserLike } from '../users';

type Thing = components['schemas']['ItemLegacy'];
type Tab = 'incoming' | 'outgoing' | 'history';

const LISTS = { incoming: '/api/trades.getIncome', outgoing: '/api/trades.getOutbound', history: '/api/trades.history' } as const;
const PATHS: Record<Tab, string> = { incoming: '/trades', outgoing: '/trades/outgoing', history: '/trades/history' };

/** `/trades`, `/trades/outgoing`, `/trades/history`: offers that update as they arrive and close. */
export function Trades({ tab }: { tab: Tab }) {
  const { t } = useI18n();
  const trades = useLoad(async () => {
    const { data } = await ok(api.POST(LISTS[tab], { body: { count: 50 } }));
    const users = new Map<number, UserLike>((data.users_data as UserLike[]).map((u) => [u.user_id, u]));
    const missing = data.trades.flatMap((trade) => [trade.user_id_from, trade.user_id_to]).filter((id) => !users.has(id));
    if (missing.length) for (const [id, user] of await usersById(missing)) users.set(id, user);
    return { trades: data.trades, users };
  }, [tab]);
  useEffect(() => onFeedEvent((event) => event.type.startsWith('trades.') && trades.reload()), [tab]);
  const action = useAction();
  const act = (method: '/api/trades.accept' | '/api/trades.decline' | '/api/trades.revoke', tradeId: number) =>
    action.run(async () => {
      await ok(api.POST(method, { body: { trade_id: tradeId } }));
      trades.reload();
    });

  return (
    <Page title={t('trades')}>
      <nav aria-label={t('trades')} class="tabs">
        {(['incoming', 'outgoing', 'history'] as const).map((name) => (
          <a key={name} href={PATHS[name]} aria-current={name === tab ? 'page' : undefined}>
            {t(name)}
          </a>
        ))}
        <a href="/trades/new">{t('newTrade')}</a>
      </nav>
      <Outcome error={action.error} />
      {!trades.data ? (
        <Loading error={trades.error} />
      ) : trades.data.trades.length === 0 ? (
        <p>{t('noTrades')}</p>
      ) : (
        <ul class="plain trades">
          {trades.data.trades.map((trade) => {
            const from = trades.data!.users.get(trade.user_id_from);
            const to = trades.data!.users.get(trade.user_id_to);
            return (
              <li key={trade.trade_id} class="card trade" data-trade-id={trade.trade_id}>
                <p>
                  {tab === 'incoming'
                    ? t('from', { nick: from?.nick ?? '?' })
                    : tab === 'outgoing'
                      ? t('to', { nick: to?.nick ?? '?' })
                      : `${from?.nick ?? '?'} → ${to?.nick ?? '?'}`}{' '}
                  · <span class="status">{t(`status${trade.status}` as Key)}</span>
                </p>
                <div class="trade-sides">
                  <Things title={from?.nick ?? ''} things={trade.things_from} />
                  <Things title={to?.nick ?? ''} things={trade.things_to} />
                </div>
                {trade.status === 0 && (
                  <div class="actions">
                    {tab === 'incoming' && (
                      <>
                        <button type="button" onClick={() => act('/api/trades.accept', trade.trade_id)} disabled={action.busy}>
                          {t('accept')}
                        </button>
                        <button
                          type="button"
                          class="secondary"
                          onClick={() => act('/api/trades.decline', trade.trade_id)}
                          disabled={action.busy}
                        >
                          {t('decline')}
                        </button>
                      </>
                    )}
                    {tab === 'outgoing' && (
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => act('/api/trades.revoke', trade.trade_id)}
                        disabled={action.busy}
                      >
                        {t('revoke')}
                      </button>
                    )}
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </Page>
  );
}

function Things({ title, things }: { title: string; things: Thing[] }) {
  return (
    <div>
      <h3 class="small">{title}</h3>
      <ul class="things">
        {things.map((thing) => (
          <li key={thing.item_id}>
            <img src={thing.image} alt="" width={40} height={40} /> {thing.title}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** `/trades/new?to={id}`: picks items on both sides and sends the offer. */
export function NewTrade() {
  const { t } = useI18n();
  const to = useLocation().query.get('to') ?? '';
  const [query, setQuery] = useState('');
  const found = useLoad(
    async () => (query.length < 2 ? [] : (await ok(api.POST('/api/users.search', { body: { query, count: 10 } }))).data.users),
    [query],
  );
  const partner = useLoad(async () => (to ? (await ok(api.POST('/api/users.get', { body: { user_id: to } }))).data[0] : undefined), [to]);
  const sides = useLoad(
    async () => (to ? (await ok(api.POST('/api/execute.prepareTrade', { body: { user_id: to } }))).result.items : undefined),
    [to],
  );
  const [give, setGive] = useState(new Set<number>());
  const [get, setGet] = useState(new Set<number>());
  const action = useAction();

  if (!to)
    return (
      <Page title={t('newTrade')}>
        <label for="partner-search">{t('searchPlayers')}</label>
        <input id="partner-search" type="search" value={query} onInput={(e) => setQuery((e.target as HTMLInputElement).value)} />
        <ul class="plain">
          {(found.data ?? []).map((user) => (
            <UserRow key={user.user_id} user={user} href={`/trades/new?to=${user.user_id}`} />
          ))}
        </ul>
      </Page>
    );
  const who = partner.data;
  const partnerId = who?.user_id;
  if (!who || partnerId === undefined || !sides.data)
    return (
      <Page title={t('newTrade')}>
        <Loading error={partner.error ?? sides.error} />
      </Page>
    );
  const toggle = (set: Set<number>, update: (s: Set<number>) => void, id: number) => {
    const next = new Set(set);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    update(next);
  };
  const send = () =>
    action.run(async () => {
      await ok(
        api.POST('/api/trades.create', {
          body: { user_id: partnerId, item_ids_from: [...give].join(','), item_ids_to: [...get].join(',') },
        }),
      );
      navigate('/trades/outgoing');
    });
  const [mine, theirs] = sides.data;

  return (
    <Page title={t('tradeWith', { nick: who.nick })}>
      <p>
        <a href={profilePath({ user_id: partnerId, domain: who.domain })}>{who.nick}</a>
      </p>
      <div class="trade-sides">
        <Picker legend={t('youGive')} things={mine?.list ?? []} chosen={give} toggle={(id) => toggle(give, setGive, id)} />
        <Picker legend={t('youGet')} things={theirs?.list ?? []} chosen={get} toggle={(id) => toggle(get, setGet, id)} />
      </div>
      <button type="button" onClick={send} disabled={action.busy || (give.size === 0 && get.size === 0)}>
        {t('sendOffer')}
      </button>
      <Outcome error={action.error} />
    </Page>
  );
}

function Picker(props: { legend: string; things: Thing[]; chosen: Set<number>; toggle: (id: number) => void }) {
  return (
    <fieldset class="picker">
      <legend>{props.legend}</legend>
      <ul class="plain">
        {props.things.map((thing) => (
          <li key={thing.item_id}>
            <label>
              <input type="checkbox" checked={props.chosen.has(thing.item_id)} onChange={() => props.toggle(thing.item_id)} />
              <img src={thing.image} alt="" width={32} height={32} /> {thing.title}
            </label>
          </li>
        ))}
      </ul>
    </fieldset>
  );
}
