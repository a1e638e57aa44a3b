import type { ComponentChildren } from 'preact';
import { useMemo } from 'preact/hooks';
import type { Language } from '../i18n';
import { Avatar } from '../ui';
import { COLOURS, useWords, type Word } from './table-words';
import { fieldsOf, rimPlaces, type FieldView, type GameEvent, type GameView } from './table-model';

export interface Person {
  nick: string;
  avatar?: string;
}
/** Who a user id is: a person's nick and avatar, or a computer player's name. */
export type Names = (userId: number | null | undefined) => Person;

type W = ReturnType<typeof useWords>['w'];

export const amountText = (lang: Language, amount: number) => amount.toLocaleString(lang === 'ru' ? 'ru-RU' : 'en-US');

export function fieldName(field: FieldView | undefined, w: W, lang: Language): string {
  if (!field) return '?';
  if (field.group?.kind === 'level')
    return w('street', { colour: COLOURS[lang][field.group.colour % COLOURS[lang].length]!, n: field.index });
  if (field.group?.kind === 'count') return w('transport', { n: field.index });
  if (field.group?.kind === 'dice') return w('utility', { n: field.index });
  const key = (field.type === 'start' ? 'start_' : field.type) as Word;
  return w(key) ?? field.type;
}

/** The board's fields, with their names, once per config. */
export function useFields(view: GameView | undefined) {
  return useMemo(() => (view ? fieldsOf(view.setup.config) : []), [view?.setup]);
}

/** A player's colour index: their place in the game's order. */
export const seatOf = (view: GameView, userId: number) => view.setup.players.findIndex((p) => p.user_id === userId);

export function Board(props: {
  view: GameView;
  names: Names;
  selected: number | undefined;
  onSelect: (fieldId: number) => void;
  centre: ComponentChildren;
}) {
  const { w, lang } = useWords();
  const { view, names } = props;
  const fields = useFields(view);
  const places = useMemo(() => rimPlaces(view.setup.config), [view.setup]);
  const owned = new Map(view.status.fields.map((f) => [f.field_id, f]));
  const cards = new Map(
    view.setup.players.flatMap((p) => (p.equipment?.cards ?? []).map((card) => [card.field_id, { ...card, user_id: p.user_id }] as const)),
  );
  const [width, height] = view.setup.config.board_size;
  return (
    <div class={places ? 'board' : 'board list'} style={places ? { gridTemplateColumns: `repeat(${width}, minmax(0, 1fr))` } : undefined}>
      {fields.map((field) => {
        const state = owned.get(field.id);
        const here = view.status.players.filter((p) => p.status === 0 && p.position === field.id);
        const card = cards.get(field.id);
        const name = fieldName(field, w, lang);
        const facts = [name];
        if (field.price !== undefined && !state) facts.push(w('price', { amount: amountText(lang, field.price) }));
        if (state) facts.push(w('owner', { nick: names(state.owner_user_id).nick }));
        if (state?.level) facts.push(w('level', { n: state.level }));
        if (state?.mortgage) facts.push(w('mortgaged'));
        if (card && state?.owner_user_id === card.user_id) facts.push(w('cardOn', { m: card.rent_multiplier, id: card.item_proto_id }));
        if (here.length) facts.push(w('here', { nicks: here.map((p) => names(p.user_id).nick).join(', ') }));
        const place = places?.[field.id];
        const classes = [
          'cell',
          field.corner ? 'corner' : '',
          state ? `owned seat-${seatOf(view, state.owner_user_id) % 8}` : '',
          state?.mortgage ? 'mortgaged' : '',
          props.selected === field.id ? 'selected' : '',
        ];
        return (
          <div
            key={field.id}
            class={classes.filter(Boolean).join(' ')}
            style={place ? { gridRow: String(place.row), gridColumn: String(place.column) } : undefined}
            data-field={field.id}
          >
            <button
              type="button"
              class="hit"
              aria-label={facts.join(', ')}
              aria-pressed={props.selected === field.id}
              onClick={() => props.onSelect(field.id)}
            />
            {field.group?.kind === 'level' && <span class={`strip colour-${field.group.colour % 12}`} aria-hidden="true" />}
            <span class="name" aria-hidden="true">
              {name}
            </span>
            <span class="sub" aria-hidden="true">
              {state
                ? state.mortgage
                  ? '⊘'
                  : state.level
                    ? '★'.repeat(Math.min(state.level, 5))
                    : '●'
                : field.price !== undefined
                  ? amountText(lang, field.price)
                  : ''}
            </span>
            {here.length > 0 && (
              <span class="tokens" aria-hidden="true">
                {here.map((p) => (
                  <span key={p.user_id} class={`token seat-${seatOf(view, p.user_id) % 8}`} />
                ))}
              </span>
            )}
          </div>
        );
      })}
      {places && (
        <div class="centre" style={{ gridRow: `2 / ${height}`, gridColumn: `2 / ${width}` }}>
          {props.centre}
        </div>
      )}
    </div>
  );
}

/** A field's details: its group, price, rents, owner, level, mortgage; and what may be done with it. */
export function FieldDetails(props: { view: GameView; fieldId: number; names: Names; children?: ComponentChildren; onClose: () => void }) {
  const { w, lang } = useWords();
  const fields = useFields(props.view);
  const field = fields[props.fieldId];
  if (!field) return null;
  const state = props.view.status.fields.find((f) => f.field_id === field.id);
  const card = props.view.setup.players.flatMap((p) =>
    (p.equipment?.cards ?? []).filter((c) => c.field_id === field.id && state?.owner_user_id === p.user_id),
  )[0];
  return (
    <section class="card field-details" aria-labelledby="field-title">
      <h2 id="field-title">{fieldName(field, w, lang)}</h2>
      <ul class="plain">
        {field.price !== undefined && <li>{w('price', { amount: amountText(lang, field.price) })}</li>}
        {field.amount !== undefined && <li>{amountText(lang, field.amount)}</li>}
        {field.rents && (
          <li>
            {w('rents')}: {field.rents.map((rent) => amountText(lang, rent)).join(' · ')}
          </li>
        )}
        {field.levelCost !== undefined && <li>{w('levelCost', { amount: amountText(lang, field.levelCost) })}</li>}
        {field.price !== undefined && <li>{w('owner', { nick: state ? props.names(state.owner_user_id).nick : w('bank') })}</li>}
        {state && state.level > 0 && <li>{w('level', { n: state.level })}</li>}
        {state?.mortgage && <li>{w('mortgaged')}</li>}
        {card && <li>{w('cardOn', { m: card.rent_multiplier, id: card.item_proto_id })}</li>}
      </ul>
      {props.children}
      <button type="button" class="secondary" onClick={props.onClose}>
        {w('close')}
      </button>
    </section>
  );
}

export function Players(props: { view: GameView; names: Names; me?: number }) {
  const { w, lang } = useWords();
  const { view } = props;
  const setup = new Map(view.setup.players.map((p) => [p.user_id, p]));
  return (
    <section class="card" aria-labelledby="players-title">
      <h2 id="players-title">{w('players')}</h2>
      <ul class="plain players">
        {view.status.players.map((player) => {
          const person = props.names(player.user_id);
          const equipment = setup.get(player.user_id)?.equipment;
          return (
            <li key={player.user_id} class={player.status === 0 ? 'player' : 'player gone'} data-user={player.user_id}>
              <span class={`token seat-${seatOf(view, player.user_id) % 8}`} aria-hidden="true" />
              <Avatar src={person.avatar} nick={person.nick} size={32} />
              <span class="who">{player.user_id === props.me ? w('you', { nick: person.nick }) : person.nick}</span>
              <span class="cash">
                {w('cash')}: {amountText(lang, player.cash)}
              </span>
              {player.status !== 0 && <span class="muted">{w('out')}</span>}
              {player.jail && <span class="muted">{w('inJail')}</span>}
              {view.status.turn.user_id === player.user_id && <strong>{w('turnNow')}</strong>}
              {equipment?.generator && <span class="muted small-note">{w('dice', { id: equipment.generator.item_proto_id })}</span>}
              {equipment?.joke && <span class="muted small-note">{w('taunt', { id: equipment.joke.item_proto_id })}</span>}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/** One event in plain words. */
export function describe(event: GameEvent, names: Names, fields: FieldView[], w: W, lang: Language): string {
  const nick = names(event.user_id as number).nick;
  const field = typeof event.field_id === 'number' ? fieldName(fields[event.field_id], w, lang) : '';
  const amount = (value: unknown) => (typeof value === 'number' ? amountText(lang, value) : '');
  switch (event.type) {
    case 'roll-dices': {
      const [a, b] = (event.dices as number[]) ?? [];
      return w('e_roll', { nick, a: a ?? '?', b: b ?? '?' });
    }
    case 'purchase':
      return w('e_purchase', { nick, field, amount: amount(event.price) });
    case 'purchase.reject':
      return w('e_purchaseReject', { nick, field });
    case 'purchase.offer':
      return w('e_offer', { nick, field });
    case 'auction.put':
      return w('e_auctionPut', { nick, field, amount: amount(event.bid) });
    case 'auction.bid':
      return w('e_auctionBid', { nick, amount: amount(event.bid) });
    case 'auction.reject':
      return w('e_auctionReject', { nick });
    case 'auction.win':
      return w('e_auctionWin', { nick, field, amount: amount(event.price) });
    case 'auction.cancel':
      return w('e_auctionCancel', { field });
    case 'rent.pay':
      return w('e_rent', { nick, field, amount: amount(event.amount) });
    case 'rent.pay.complete':
      return w('e_rentPaid', { nick, amount: amount(event.amount), to: names(event.user_id_receiver as number).nick });
    case 'rent.zero':
    case 'rent.zero.self':
    case 'rent.zero.mortgaged':
      return w('e_rentZero', { nick, field });
    case 'rent.pay.cancel':
      return w('e_rentCancel', { nick: names(event.user_id_receiver as number).nick });
    case 'bank.fee':
      return w('e_fee', { nick, amount: amount(event.amount) });
    case 'bank.fee.pay':
      return w('e_feePaid', { nick, amount: amount(event.amount) });
    case 'bank.income':
      return w('e_income', { nick, amount: amount(event.amount) });
    case 'start.income':
      return w('e_startIncome', { nick });
    case 'start.bonus':
      return w('e_startBonus', { nick });
    case 'chance': {
      const data = event.data as { amount?: number } | undefined;
      return data?.amount !== undefined ? w('e_chanceAmount', { nick, amount: amount(data.amount) }) : w('e_chance', { nick });
    }
    case 'jail.put':
      return w('e_jail', { nick });
    case 'jail.put.double':
      return w('e_jailDouble', { nick });
    case 'jail.visit':
      return w('e_jailVisit', { nick });
    case 'jail.release':
    case 'roll-dices.jail.success':
      return w('e_jailOut', { nick });
    case 'jail.release.pay':
      return w('e_jailPay', { nick });
    case 'roll-dices.jail.fail':
      return w('e_jailFail', { nick });
    case 'park':
      return w('e_park', { nick });
    case 'level.build':
      return w('e_build', { nick, field });
    case 'level.sell':
      return w('e_sell', { nick, field });
    case 'mortgage.put':
      return w('e_mortgage', { nick, field });
    case 'mortgage.buyback':
      return w('e_buyback', { nick, field });
    case 'mortgage.expire':
      return w('e_mortgageExpire', { field });
    case 'contract.send':
      return w('e_dealSent', { nick, to: names(event.user_id_to as number).nick });
    case 'contract.accept':
      return w('e_dealAccepted', { nick });
    case 'contract.reject':
      return w('e_dealRejected', { nick });
    case 'leave':
      return w(event.kicked === 1 ? 'e_kicked' : 'e_leave', { nick });
    case 'bankrupt':
      return w('e_bankrupt', { nick });
    case 'game-over':
      return w('e_over', { nick: names(event.user_id_winner as number).nick });
    default:
      return w('e_other', { type: event.type });
  }
}

const LOG_SHOWN = 200;

/** The events so far in plain words, the newest first. */
export function Log(props: { view: GameView; names: Names }) {
  const { w, lang } = useWords();
  const fields = useFields(props.view);
  const events = props.view.events.slice(-LOG_SHOWN).reverse();
  return (
    <section class="card" aria-labelledby="log-title">
      <h2 id="log-title">{w('log')}</h2>
      <div class="game-log" role="log" tabIndex={0} aria-labelledby="log-title" data-events={props.view.events.length}>
        <ul class="plain">
          {events.map((event) => (
            <li key={event.id} data-type={event.type}>
              {describe(event, props.names, fields, w, lang)}
            </li>
          ))}
        </ul>
      </div>
    </section>
  );
}
