import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { components } from '../api/schema';
import { useI18n, type Key } from '../i18n';
import { balance, useFeed } from '../realtime';
import { Form, Loading, Outcome, Page, useAction, useLoad } from '../ui';
import { TYPES, TYPE_NAMES } from './inventory';
import { money, readBalance } from '../wallet';

type Thing = components['schemas']['MarketThing'];
type Item = components['schemas']['Item'];
type Tab = 'market' | 'myListings' | 'walletHistory' | 'shop';

const TABS: [Tab, string][] = [
  ['market', '/market'],
  ['myListings', '/market/my'],
  ['walletHistory', '/market/history'],
  ['shop', '/shop'],
];
const PAGE = 20;
const SHOP_PAGE = 50;

function MarketPage({ tab, children }: { tab: Tab; children: preact.ComponentChildren }) {
  const { t } = useI18n();
  return (
    <Page title={t(tab)}>
      <nav aria-label={t('market')} class="tabs">
        {TABS.map(([name, href]) => (
          <a key={name} href={href} aria-current={name === tab ? 'page' : undefined}>
            {t(name)}
          </a>
        ))}
      </nav>
      {children}
    </Page>
  );
}

function TypeFilter({ value, onChange }: { value: number | undefined; onChange: (type: number | undefined) => void }) {
  const { t, lang } = useI18n();
  return (
    <label>
      {t('filterType')}{' '}
      <select
        value={value === undefined ? 'all' : String(value)}
        onChange={(e) => {
          const chosen = (e.target as HTMLSelectElement).value;
          onChange(chosen === 'all' ? undefined : Number(chosen));
        }}
      >
        <option value="all">{t('filterAll')}</option>
        {TYPES.map((n) => (
          <option key={n} value={String(n)}>
            {TYPE_NAMES[lang][n]}
          </option>
        ))}
      </select>
    </label>
  );
}

/** `/market`: prototypes on sale, cheapest first; a prototype's offers, each bought at the price shown. */
export function Market() {
  const { t, lang } = useI18n();
  const [type, setType] = useState<number | undefined>(undefined);
  const [offset, setOffset] = useState(0);
  const [open, setOpen] = useState<Thing | undefined>(undefined);
  const offers = useLoad(async () => {
    const { data } = await ok(
      api.POST('/api/market.search', { body: { offset, count: PAGE, ...(type !== undefined ? { thing_type: type } : {}) } }),
    );
    return data;
  }, [type, offset]);
  const sales = useLoad(async () => (await ok(api.POST('/api/market.getLastSellups', { body: { count: 10 } }))).data.things, []);
  useFeed(
    (event) => event.type === 'market.sold' && (offers.reload(), sales.reload()),
    () => (offers.reload(), sales.reload()),
    [type, offset],
  );

  return (
    <MarketPage tab="market">
      <div class="filters">
        <TypeFilter
          value={type}
          onChange={(next) => {
            setType(next);
            setOffset(0);
          }}
        />
        {offers.data && <span class="muted">{t('onSale', { n: offers.data.count })}</span>}
      </div>
      {open && <Offers proto={open} onClose={() => setOpen(undefined)} onBought={offers.reload} />}
      {!offers.data ? (
        <Loading error={offers.error} />
      ) : offers.data.things.length === 0 ? (
        <p>{t('nothingOnSale')}</p>
      ) : (
        <ul class="grid" aria-label={t('market')}>
          {offers.data.things.map((thing) => (
            <li key={thing.item_proto_id} class="item">
              <button type="button" class="item-button" onClick={() => setOpen(thing)}>
                <img src={thing.image} alt="" width={72} height={72} loading="lazy" />
                <span>{thing.title}</span>
                <span class="muted">{t('priceFrom', { price: money(lang, thing.price), n: thing.count ?? 1 })}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {offers.data && <Pager offset={offset} total={offers.data.count} page={PAGE} onChange={setOffset} />}
      <section class="card" aria-labelledby="sales-title">
        <h2 id="sales-title">{t('recentSales')}</h2>
        {!sales.data ? (
          <Loading error={sales.error} />
        ) : sales.data.length === 0 ? (
          <p>{t('noSales')}</p>
        ) : (
          <ul class="plain">
            {sales.data.map((sale) => (
              <li key={`${sale.thing_id}-${sale.ts}`}>
                {sale.title} · {money(lang, sale.price)}
              </li>
            ))}
          </ul>
        )}
      </section>
    </MarketPage>
  );
}

function Pager({ offset, total, page, onChange }: { offset: number; total: number; page: number; onChange: (offset: number) => void }) {
  const { t } = useI18n();
  if (total <= page) return null;
  return (
    <div class="actions">
      <button type="button" class="secondary" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - page))}>
        {t('previous')}
      </button>
      <button type="button" class="secondary" disabled={offset + page >= total} onClick={() => onChange(offset + page)}>
        {t('next')}
      </button>
    </div>
  );
}

function Offers({ proto, onClose, onBought }: { proto: Thing; onClose: () => void; onBought: () => void }) {
  const { t, lang } = useI18n();
  const listing = useLoad(
    async () => (await ok(api.POST('/api/market.getListing', { body: { thing_prototype_id: proto.item_proto_id, count: PAGE } }))).data,
    [proto.item_proto_id],
  );
  const action = useAction();
  const buy = (thing: Thing) =>
    action.run(async () => {
      try {
        // The price in kopecks, as the reference's clients send it: a changed price is refused, never paid.
        const { data } = await ok(
          api.POST('/api/market.buy', { body: { thing_id: thing.thing_id!, price: Math.round(thing.price * 100) } }),
        );
        balance.set(data.balance);
        return t('bought', { title: thing.title, price: money(lang, data.price) });
      } finally {
        listing.reload();
        onBought();
      }
    });
  return (
    <section class="card details" aria-labelledby="offers-title">
      <h2 id="offers-title">{proto.title}</h2>
      <Outcome error={action.error} notice={action.notice} />
      {!listing.data ? (
        <Loading error={listing.error} />
      ) : listing.data.things.length === 0 ? (
        <p>{t('nothingOnSale')}</p>
      ) : (
        <ul class="plain offers">
          {listing.data.things.map((thing) => (
            <li key={thing.thing_id}>
              <button type="button" onClick={() => buy(thing)} disabled={action.busy}>
                {t('buyFor', { price: money(lang, thing.price) })}
              </button>
            </li>
          ))}
        </ul>
      )}
      <button type="button" class="secondary" onClick={onClose}>
        {t('close')}
      </button>
    </section>
  );
}

/** `/market/my`: the player's listings (taken off at will) and the items they may put on sale. */
export function MyListings() {
  const { t, lang } = useI18n();
  const [offset, setOffset] = useState(0);
  const listings = useLoad(async () => (await ok(api.POST('/api/market.getMy', { body: { offset, count: PAGE } }))).data, [offset]);
  const items = useLoad(async () => {
    const { data } = await ok(api.POST('/api/inventory.get', { body: { add_legacy: 0 } }));
    return 'items' in data ? data.items : [];
  }, []);
  const reload = () => {
    listings.reload();
    items.reload();
  };
  useFeed((event) => event.type === 'market.sold' && reload(), reload, [offset]);
  const action = useAction();
  const cancel = (thing: Thing) =>
    action.run(async () => {
      await ok(api.POST('/api/market.cancel', { body: { thing_id: thing.thing_id! } }));
      reload();
      return t('cancelled', { title: thing.title });
    });

  return (
    <MarketPage tab="myListings">
      <Outcome error={action.error} notice={action.notice} />
      <section class="card" aria-labelledby="listings-title">
        <h2 id="listings-title">{t('onSaleNow')}</h2>
        {!listings.data ? (
          <Loading error={listings.error} />
        ) : listings.data.things.length === 0 ? (
          <p>{t('noListings')}</p>
        ) : (
          <ul class="plain listings">
            {listings.data.things.map((thing) => (
              <li key={thing.thing_id} class="user-row">
                <img src={thing.image} alt="" width={32} height={32} />
                <span>
                  {thing.title} · {money(lang, thing.price)}
                </span>
                <button
                  type="button"
                  class="secondary"
                  onClick={() => cancel(thing)}
                  disabled={action.busy}
                  aria-label={`${t('takeOff')}: ${thing.title}`}
                >
                  {t('takeOff')}
                </button>
              </li>
            ))}
          </ul>
        )}
        {listings.data && <Pager offset={offset} total={listings.data.count} page={PAGE} onChange={setOffset} />}
      </section>
      {items.data ? <SellForm items={items.data} onSold={reload} /> : <Loading error={items.error} />}
    </MarketPage>
  );
}

function SellForm({ items, onSold }: { items: Item[]; onSold: () => void }) {
  const { t, lang } = useI18n();
  const [itemId, setItemId] = useState<number | undefined>(undefined);
  const [price, setPrice] = useState('');
  const action = useAction();
  const item = items.find((entry) => entry.item_id === itemId) ?? items[0];
  const sell = () =>
    action.run(async () => {
      const units = Number(price.replace(',', '.'));
      const { data } = await ok(api.POST('/api/market.sell', { body: { thing_id: item!.item_id, price: units } }));
      setPrice('');
      onSold();
      return t('listed', { title: item!.title, price: money(lang, data.price) });
    });
  const quickSell = () =>
    action.run(async () => {
      const { data } = await ok(api.POST('/api/market.quickSell', { body: { thing_id: item!.item_id } }));
      balance.set(data.balance);
      onSold();
      return t('quickSold', { title: item!.title });
    });
  const quick = item?.prices?.quick_sell;
  return (
    <section class="card" aria-labelledby="sell-title">
      <h2 id="sell-title">{t('sellItem')}</h2>
      {items.length === 0 ? (
        <p>{t('nothingToSell')}</p>
      ) : (
        <Form onSubmit={sell} label={t('sellItem')}>
          <div class="field">
            <label for="sell-item">{t('item')}</label>
            <select id="sell-item" value={String(item!.item_id)} onChange={(e) => setItemId(Number((e.target as HTMLSelectElement).value))}>
              {items.map((entry) => (
                <option key={entry.item_id} value={String(entry.item_id)}>
                  {entry.title} (#{entry.item_id})
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="sell-price">{t('price')}</label>
            <input
              id="sell-price"
              name="price"
              inputMode="decimal"
              required
              value={price}
              onInput={(e) => setPrice((e.target as HTMLInputElement).value)}
            />
          </div>
          <div class="actions">
            <button type="submit" disabled={action.busy || price.trim() === ''}>
              {t('sell')}
            </button>
            {quick !== undefined && (
              <button type="button" class="secondary" onClick={quickSell} disabled={action.busy}>
                {t('quickSell', { price: money(lang, quick) })}
              </button>
            )}
          </div>
        </Form>
      )}
      <Outcome error={action.error} notice={action.notice} />
    </section>
  );
}

/** `/market/history`: every change of the balance, newest first. */
export function WalletHistory() {
  const { t, lang } = useI18n();
  const [offset, setOffset] = useState(0);
  const history = useLoad(async () => {
    await readBalance();
    return (await ok(api.POST('/api/wallet.getHistory', { body: { offset, count: PAGE } }))).data;
  }, [offset]);
  useFeed((event) => event.type === 'wallet.balance' && history.reload(), history.reload, [offset]);
  return (
    <MarketPage tab="walletHistory">
      {!history.data ? (
        <Loading error={history.error} />
      ) : history.data.history.length === 0 ? (
        <p>{t('noHistory')}</p>
      ) : (
        <table class="history">
          <caption class="visually-hidden">{t('walletHistory')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('when')}</th>
              <th scope="col">{t('what')}</th>
              <th scope="col">{t('amount')}</th>
              <th scope="col">{t('balance')}</th>
            </tr>
          </thead>
          <tbody>
            {history.data.history.map((entry) => (
              <tr key={entry.id}>
                <td>{new Date(entry.ts * 1000).toLocaleString(lang)}</td>
                <td>{t(`kind_${entry.kind}` as Key)}</td>
                <td>{(entry.amount > 0 ? '+' : '') + money(lang, entry.amount)}</td>
                <td>{money(lang, entry.balance)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {history.data && <Pager offset={offset} total={history.data.count} page={PAGE} onChange={setOffset} />}
    </MarketPage>
  );
}

/** `/shop`: the catalogue's prototypes that have a price, bought new from the platform. */
export function Shop() {
  const { t, lang } = useI18n();
  const [type, setType] = useState<number | undefined>(undefined);
  const [offset, setOffset] = useState(0);
  const page = useLoad(async () => {
    const { data } = await ok(
      api.POST('/api/data.searchItemProtos', {
        body: { offset, count: SHOP_PAGE, add_metadata: 0, add_legacy: 0, ...(type !== undefined ? { type: String(type) } : {}) },
      }),
    );
    const protos = 'item_protos' in data ? data.item_protos : [];
    return { protos: protos.filter((proto) => (proto.prices?.buy ?? 0) > 0), full: protos.length === SHOP_PAGE };
  }, [type, offset]);
  const action = useAction();
  const buy = (protoId: number, title: string) =>
    action.run(async () => {
      const { data } = await ok(api.POST('/api/shop.buy', { body: { item_proto_id: protoId, request_id: crypto.randomUUID() } }));
      balance.set(data.balance);
      return t('shopBought', { title, balance: money(lang, data.balance) });
    });
  return (
    <MarketPage tab="shop">
      <div class="filters">
        <TypeFilter
          value={type}
          onChange={(next) => {
            setType(next);
            setOffset(0);
          }}
        />
      </div>
      <Outcome error={action.error} notice={action.notice} />
      {!page.data ? (
        <Loading error={page.error} />
      ) : page.data.protos.length === 0 ? (
        <p>{t('nothingInShop')}</p>
      ) : (
        <ul class="grid" aria-label={t('shop')}>
          {page.data.protos.map((proto) => (
            <li key={proto.item_proto_id} class="item">
              <img src={proto.image} alt="" width={72} height={72} loading="lazy" />
              <span>{proto.title}</span>
              <button
                type="button"
                onClick={() => buy(proto.item_proto_id, proto.title)}
                disabled={action.busy}
                aria-label={`${proto.title}: ${t('buyFor', { price: money(lang, proto.prices!.buy!) })}`}
              >
                {t('buyFor', { price: money(lang, proto.prices!.buy!) })}
              </button>
            </li>
          ))}
        </ul>
      )}
      {page.data && (offset > 0 || page.data.full) && (
        <div class="actions">
          <button type="button" class="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - SHOP_PAGE))}>
            {t('previous')}
          </button>
          <button type="button" class="secondary" disabled={!page.data.full} onClick={() => setOffset(offset + SHOP_PAGE)}>
            {t('next')}
          </button>
        </div>
      )}
    </MarketPage>
  );
}
