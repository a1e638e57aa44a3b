import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { components } from '../api/schema';
import { useI18n } from '../i18n';
import { Loading, Outcome, Page, useAction, useLoad } from '../ui';

type Item = components['schemas']['Item'];
type Tree = components['schemas']['EquippedTree'];
/** Where an item is equipped: on the profile, or the board's name. */
type Place = { profile: true } | { board: string };

export const TYPES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] as const;
export const TYPE_NAMES: Record<'en' | 'ru', string[]> = {
  en: ['Cards', 'Gift sets', 'Cases', 'Keys', 'Dice', 'Badges', 'Passes', 'Subscriptions', 'Taunts', 'Stickers'],
  ru: ['Карточки', 'Наборы', 'Кейсы', 'Ключи', 'Кубики', 'Значки', 'Пропуска', 'Подписки', 'Насмешки', 'Стикеры'],
};
const CASE = 2;
const GIFT_SET = 1;
const CRAFT_COUNT = 10;
const CARD = 0;
const BADGE = 5;
/** Types that go on a board: cards, dice, taunts. */
const BOARD_TYPES = new Set([CARD, 4, 8]);
/** The board items go on unless the player picks another (the server's default). */
const DEFAULT_BOARD = 'classic';

/** Each equipped item's place, from inventory.get's `equipped` tree. */
function placesOf(tree: Tree | undefined): Map<number, Place> {
  const places = new Map<number, Place>();
  for (const id of tree?.profile?.badges ?? []) places.set(id, { profile: true });
  for (const [board, slots] of Object.entries(tree?.game ?? {})) {
    for (const ids of Object.values(slots.cards)) for (const id of ids) places.set(id, { board });
    for (const id of [slots.generator, slots.joke]) if (id) places.set(id, { board });
  }
  return places;
}

export function Inventory() {
  const { t, lang } = useI18n();
  const [order, setOrder] = useState<'time' | 'quality'>('time');
  const [type, setType] = useState<number | 'all'>('all');
  const [selected, setSelected] = useState<number | undefined>(undefined);
  const inventory = useLoad(async () => {
    const { data } = await ok(api.POST('/api/inventory.get', { body: { add_legacy: 0, order, add_equipped: 'tree' } }));
    if (!('items' in data)) return { items: [], places: new Map<number, Place>(), boards: [DEFAULT_BOARD] };
    const tree = 'equipped' in data ? data.equipped : undefined;
    return { items: data.items, places: placesOf(tree), boards: [...new Set([DEFAULT_BOARD, ...Object.keys(tree?.game ?? {})])] };
  }, [order]);
  const action = useAction();
  const items = inventory.data?.items;
  const places = inventory.data?.places ?? new Map<number, Place>();
  if (!items)
    return (
      <Page title={t('inventory')}>
        <Loading error={inventory.error} />
      </Page>
    );
  const shown = type === 'all' ? items : items.filter((item) => item.type === type);
  const item = items.find((i) => i.item_id === selected);

  return (
    <Page title={t('inventory')}>
      <div class="filters">
        <label>
          {t('filterType')}{' '}
          <select
            value={String(type)}
            onChange={(e) =>
              setType((e.target as HTMLSelectElement).value === 'all' ? 'all' : Number((e.target as HTMLSelectElement).value))
            }
          >
            <option value="all">{t('filterAll')}</option>
            {TYPES.map((n) => (
              <option key={n} value={String(n)}>
                {TYPE_NAMES[lang][n]}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('order')}{' '}
          <select value={order} onChange={(e) => setOrder((e.target as HTMLSelectElement).value as 'time' | 'quality')}>
            <option value="time">{t('newest')}</option>
            <option value="quality">{lang === 'ru' ? 'Сначала ценные' : 'Highest class first'}</option>
          </select>
        </label>
        <span class="muted">{t('items', { n: shown.length })}</span>
      </div>
      <Outcome error={action.error} notice={action.notice} />
      {item && (
        <ItemDetails
          item={item}
          items={items}
          place={places.get(item.item_id)}
          boards={inventory.data?.boards ?? [DEFAULT_BOARD]}
          onClose={() => setSelected(undefined)}
          action={action}
          onChanged={inventory.reload}
        />
      )}
      <ul class="grid" aria-label={t('inventory')}>
        {shown.map((entry) => (
          <li key={entry.item_id} class="item">
            <button
              type="button"
              class="item-button"
              onClick={() => setSelected(entry.item_id)}
              aria-label={`${entry.title}${places.has(entry.item_id) ? ` (${t('equipped')})` : ''}: ${t('details')}`}
            >
              <img src={entry.image} alt="" width={72} height={72} loading="lazy" />
              <span>{entry.title}</span>
            </button>
            {places.has(entry.item_id) && (
              <span class="tag" aria-hidden="true">
                {t('equipped')}
              </span>
            )}
          </li>
        ))}
      </ul>
    </Page>
  );
}

function ItemDetails(props: {
  item: Item;
  items: Item[];
  place: Place | undefined;
  boards: string[];
  onClose: () => void;
  onChanged: () => void;
  action: ReturnType<typeof useAction>;
}) {
  const { t } = useI18n();
  const { item, items, action, place } = props;
  const [board, setBoard] = useState(DEFAULT_BOARD);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [item.item_id]);
  // Ten craftable items of one type and class make one of the next class.
  const twins = items.filter((other) => other.can_craft === 1 && other.type === item.type && other.quality_id === item.quality_id);
  const canCraft = item.can_craft === 1 && twins.length >= CRAFT_COUNT;
  const key = item.type === CASE ? items.find((other) => other.item_proto_id === item.key_item_proto_id) : undefined;
  const odds = useLoad(async () => {
    if (!item.drop?.length) return new Map<number, string>();
    const ids = item.drop.map((d) => d.item_proto_id).join(',');
    const { data } = await ok(api.POST('/api/data.getItemProtos', { body: { item_proto_ids: ids, add_legacy: 0 } }));
    const protos = 'item_protos' in data ? data.item_protos : [];
    return new Map(protos.map((p) => [p.item_proto_id, p.title]));
  }, [item.item_proto_id]);
  const keyTitle = useLoad(async () => {
    if (item.type !== CASE || item.key_item_proto_id === undefined) return '';
    const { data } = await ok(
      api.POST('/api/data.getItemProtos', { body: { item_proto_ids: String(item.key_item_proto_id), add_legacy: 0 } }),
    );
    return ('item_protos' in data ? data.item_protos[0]?.title : undefined) ?? '';
  }, [item.item_proto_id]);

  const craft = () =>
    action.run(async () => {
      const ids = [item, ...twins.filter((twin) => twin !== item)].slice(0, CRAFT_COUNT).map((twin) => twin.item_id);
      const { data } = await ok(api.POST('/api/inventory.craft', { body: { item_ids: ids.join(',') } }));
      props.onChanged();
      props.onClose();
      return t('crafted', { title: data.item.title });
    });
  const open = () =>
    action.run(async () => {
      const { data } = await ok(
        api.POST('/api/inventory.open', {
          body: { item_id: item.item_id, ...(key ? { key_item_id: key.item_id } : {}), request_id: crypto.randomUUID() },
        }),
      );
      props.onChanged();
      props.onClose();
      return t('opened', { titles: data.items.map((i) => i.title).join(', ') || t('nothing') });
    });

  const onBoard = BOARD_TYPES.has(item.type) && (item.type !== CARD || item.monopoly_id !== undefined);
  const equippable = onBoard || item.type === BADGE;
  const equip = () =>
    action.run(async () => {
      await ok(api.POST('/api/inventory.equip', { body: { item_id: item.item_id, ...(onBoard ? { game: board } : {}) } }));
      props.onChanged();
      return t('equippedDone', { title: item.title });
    });
  const unequip = () =>
    action.run(async () => {
      await ok(api.POST('/api/inventory.unequip', { body: { item_id: item.item_id } }));
      props.onChanged();
      return t('unequippedDone', { title: item.title });
    });

  return (
    <section class="card details" aria-labelledby="item-title">
      <h2 id="item-title" tabIndex={-1} ref={heading}>
        {item.title}
      </h2>
      <div class="details-body">
        <img src={item.image} alt="" width={128} height={128} />
        <div>
          <p>{item.description}</p>
          {place && (
            <p class="notice">{t('equippedOn', { where: 'profile' in place ? t('onProfile') : t('onBoard', { board: place.board }) })}</p>
          )}
          <div class="actions">
            {equippable && onBoard && (
              <span>
                <label for="equip-board">{t('board')}</label>{' '}
                <select id="equip-board" value={board} onChange={(e) => setBoard((e.target as HTMLSelectElement).value)}>
                  {props.boards.map((name) => (
                    <option key={name} value={name}>
                      {name}
                    </option>
                  ))}
                </select>
              </span>
            )}
            {equippable && (
              <button type="button" onClick={equip} disabled={action.busy}>
                {t('equip')}
              </button>
            )}
            {place && (
              <button type="button" class="secondary" onClick={unequip} disabled={action.busy}>
                {t('unequip')}
              </button>
            )}
            {canCraft && (
              <button type="button" onClick={craft} disabled={action.busy}>
                {t('craft')}
              </button>
            )}
            {item.type === CASE &&
              (key ? (
                <button type="button" onClick={open} disabled={action.busy}>
                  {t('openWith', { key: key.title })}
                </button>
              ) : (
                <p>{t('noKey', { key: keyTitle.data ?? '' })}</p>
              ))}
            {item.type === GIFT_SET && (
              <button type="button" onClick={open} disabled={action.busy}>
                {t('open')}
              </button>
            )}
            <button type="button" class="secondary" onClick={props.onClose}>
              {t('close')}
            </button>
          </div>
        </div>
      </div>
      {item.drop && item.drop.length > 0 && odds.data && (
        <table>
          <caption>{t('odds')}</caption>
          <tbody>
            {item.drop.map((entry) => (
              <tr key={entry.item_proto_id}>
                <th scope="row">{odds.data?.get(entry.item_proto_id) ?? `#${entry.item_proto_id}`}</th>
                <td>{(entry.chance * 100).toFixed(2)} %</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
