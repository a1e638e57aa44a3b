import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ok, ApiFailure } from '../api/client';
import { location, navigate } from '../router';
import { session } from '../session';
import { useStore } from '../store';
import { Field, Form, Loading, Outcome, Page, useAction, useLoad } from '../ui';
import { usersById } from '../users';
import { replayPath, tablePath } from '../table-links';
import { Board, FieldDetails, Log, Players, amountText, fieldName, useFields, type Names, type Person } from './table-board';
import { GameConnection } from './table-socket';
import { apply, viewAt, winnerOf, type GameView, type Packet } from './table-model';
import { useWords } from './table-words';
import './table.css';

/** What the hash names: `#/{gs_id}/{gs_game_id}` a live game, `#/replay/{game_id}` a replay, nothing the table's home. */
function parseHash(hash: string): { kind: 'home' } | { kind: 'live'; gsId: string; gameId: number } | { kind: 'replay'; gameId: number } {
  const replay = /^#\/replay\/(\d{1,12})$/.exec(hash);
  if (replay) return { kind: 'replay', gameId: Number(replay[1]) };
  const live = /^#\/([^/]{1,64})\/(\d{1,12})$/.exec(hash);
  if (live) return { kind: 'live', gsId: decodeURIComponent(live[1]!), gameId: Number(live[2]) };
  return { kind: 'home' };
}

/** `/table/#/{gs_id}/{gs_game_id}`, `/table/#/replay/{game_id}` and `/table/`: the game table. */
export default function Table() {
  useStore(location);
  const [, setHash] = useState(window.location.hash);
  useEffect(() => {
    const changed = () => setHash(window.location.hash);
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  const target = parseHash(window.location.hash);
  if (target.kind === 'live') return <LiveTable key={`${target.gsId}/${target.gameId}`} gsId={target.gsId} gameId={target.gameId} />;
  if (target.kind === 'replay') return <Replay key={target.gameId} gameId={target.gameId} />;
  return <TableHome />;
}

/** The people of a game by id (users.get), the computer players by their number. */
function useNames(view: GameView | undefined): Names {
  const { w } = useWords();
  const ids = view?.setup.players.map((p) => p.user_id) ?? [];
  const key = ids.join(',');
  const [people, setPeople] = useState(new Map<number, Person>());
  useEffect(() => {
    const wanted = ids.filter((id) => id > 0);
    if (wanted.length === 0) return;
    usersById(wanted).then(
      (found) => setPeople(found),
      () => undefined,
    );
  }, [key]);
  return (userId) => {
    if (userId === null || userId === undefined || userId === 0) return { nick: w('bank') };
    if (userId < 0) return { nick: w('computer', { n: -userId }) };
    return people.get(userId) ?? { nick: `#${userId}` };
  };
}

function TableHome() {
  const { w } = useWords();
  const me = useStore(session);
  if (!me)
    return (
      <Page title={w('table')}>
        <p>
          <a href={`/signin?next=${encodeURIComponent('/table/')}`}>{w('signInToPlay')}</a>
        </p>
      </Page>
    );
  return (
    <Page title={w('table')}>
      <div class="columns">
        <NewGame />
        <MyGames />
      </div>
    </Page>
  );
}

function NewGame() {
  const { w } = useWords();
  const [computers, setComputers] = useState('1');
  const [seconds, setSeconds] = useState('60');
  const { busy, error, run } = useAction();
  const playing = error instanceof ApiFailure && error.code === 1903 ? (error.data as { gs_id?: string; gs_game_id?: number }) : undefined;
  return (
    <section class="card" aria-labelledby="new-game">
      <h2 id="new-game">{w('playComputer')}</h2>
      <Form
        label={w('playComputer')}
        onSubmit={() =>
          run(async () => {
            const { data } = await ok(
              api.POST('/api/games.createVsComputer', { body: { computers: Number(computers), action_seconds: Number(seconds) } }),
            );
            const resolved = await ok(api.POST('/api/games.resolve', { body: { gs_game_id: data.game_id } }));
            navigate(tablePath(resolved.data.gs_id, data.game_id));
          })
        }
      >
        <div class="field">
          <label for="computers">{w('computers')}</label>
          <select id="computers" value={computers} onChange={(e) => setComputers((e.target as HTMLSelectElement).value)}>
            {['1', '2', '3'].map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </div>
        <Field label={w('actionSeconds')} name="action_seconds" value={seconds} onInput={setSeconds} inputMode="numeric" />
        <button type="submit" disabled={busy}>
          {w('start')}
        </button>
      </Form>
      {playing?.gs_id && playing.gs_game_id !== undefined ? (
        <p class="error" role="alert">
          {w('playsAlready')} <a href={tablePath(playing.gs_id, playing.gs_game_id)}>{w('openIt')}</a>
        </p>
      ) : (
        <Outcome error={error} />
      )}
    </section>
  );
}

function MyGames() {
  const { w } = useWords();
  const { data, error } = useLoad(async () => (await ok(api.POST('/api/games.my', { body: { count: 20 } }))).data, []);
  return (
    <section class="card" aria-labelledby="my-games">
      <h2 id="my-games">{w('myGames')}</h2>
      {!data ? (
        <Loading error={error} />
      ) : data.games.length === 0 ? (
        <p>{w('noGames')}</p>
      ) : (
        <ul class="plain">
          {data.games.map((game) => (
            <li key={game.game_id}>
              {game.status === 'live' ? (
                <a href={tablePath('gs-1', game.game_id)}>{w('gameLive', { id: game.game_id })}</a>
              ) : (
                <a href={replayPath(game.game_id)}>{w('gameOver', { id: game.game_id })}</a>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Seconds left of the current action, counted down from the latest packet. */
function Timer({ view }: { view: GameView }) {
  const { w } = useWords();
  const [, tick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, []);
  const expires = view.status.timer?.ts_expires;
  if (expires === undefined || winnerOf(view.events) !== undefined) return null;
  const left = Math.max(0, Math.ceil((expires - view.time.ts_now - (Date.now() - view.receivedAt)) / 1000));
  return <p class="timer">{w('timer', { s: left })}</p>;
}

/** The middle of the board: the round, the last roll, whose move it is. */
function Centre({ view, names, live, me }: { view: GameView; names: Names; live: boolean; me?: number }) {
  const { w } = useWords();
  const lastRoll = [...view.events].reverse().find((event) => event.type === 'roll-dices');
  const dice = (lastRoll?.dices as number[] | undefined) ?? [];
  const actor = view.status.turn.action.user_id;
  return (
    <div class="centre-body">
      <p>{w('round', { n: view.status.round })}</p>
      {dice.length > 0 && (
        <p class="dice" aria-hidden="true">
          {dice.map((d, i) => (
            <span key={i} class="die">
              {d}
            </span>
          ))}
        </p>
      )}
      {actor !== null && <p>{actor === me ? w('yourTurn') : w('waitingFor', { nick: names(actor).nick })}</p>}
      {live && <Timer view={view} />}
    </div>
  );
}

function LiveTable({ gsId, gameId }: { gsId: string; gameId: number }) {
  const { w } = useWords();
  const me = useStore(session)?.user_id;
  const [view, setView] = useState<GameView | undefined>(undefined);
  const [player, setPlayer] = useState(false);
  const [state, setState] = useState<'connecting' | 'live'>('connecting');
  const [failure, setFailure] = useState<unknown>(undefined);
  const [connection, setConnection] = useState<GameConnection | undefined>(undefined);
  const [selected, setSelected] = useState<number | undefined>(undefined);
  const names = useNames(view);
  useEffect(() => {
    const current = new GameConnection(gsId, gameId, {
      ready: setPlayer,
      packet: (seq, packet) => setView((before) => apply(before, seq, packet, Date.now())),
      state: setState,
      failed: setFailure,
    });
    setConnection(current);
    current.start();
    return () => current.stop();
  }, [gsId, gameId]);
  const title = w('game', { id: gameId });
  if (!view)
    return <Page title={title}>{failure === undefined ? <p role="status">{w('connecting')}</p> : <Outcome error={failure} />}</Page>;
  const winner = winnerOf(view.events);
  const acting = player && winner === undefined && view.status.turn.action.user_id === me ? view.status.turn.action.list : [];
  return (
    <Page title={title}>
      <div class="table-layout">
        <div class="board-side">
          <h2 class="visually-hidden">{w('board')}</h2>
          <Board
            view={view}
            names={names}
            selected={selected}
            onSelect={setSelected}
            centre={<Centre view={view} names={names} live me={player ? me : undefined} />}
          />
          {selected !== undefined && (
            <FieldDetails view={view} fieldId={selected} names={names} onClose={() => setSelected(undefined)}>
              {connection && me !== undefined && (
                <FieldActions view={view} fieldId={selected} me={me} list={acting} connection={connection} />
              )}
            </FieldDetails>
          )}
        </div>
        <div class="info-side">
          {winner !== undefined ? (
            <section class="card" aria-live="polite">
              <p>{winner ? w('over', { nick: names(winner).nick }) : w('overNoWinner')}</p>
              <p>
                <a href={replayPath(gameId)}>{w('openReplay')}</a>
              </p>
            </section>
          ) : player && connection && me !== undefined ? (
            <ActionPanel view={view} me={me} list={acting} names={names} connection={connection} live={state === 'live'} />
          ) : (
            <p class="card">{w('watching')}</p>
          )}
          {state === 'connecting' && winner === undefined && <p role="status">{w('connecting')}</p>}
          <Players view={view} names={names} me={me} />
          <Log view={view} names={names} />
        </div>
      </div>
    </Page>
  );
}

/** Sends an action; resolves whether the game took it. */
type Send = (params: Record<string, string | number>) => Promise<boolean>;

/** Runs a game action; a refusal shows the game's reason. */
function useGameAction(connection: GameConnection) {
  const action = useAction();
  const send: Send = async (params) => {
    let taken = false;
    await action.run(async () => {
      await connection.act(params);
      taken = true;
    });
    return taken;
  };
  return { ...action, send };
}

function Refusal({ error }: { error: unknown }) {
  const { w } = useWords();
  if (error instanceof ApiFailure && error.code === 1902)
    return (
      <p class="error" role="alert">
        {w('refused', { reason: error.description })}
      </p>
    );
  return <Outcome error={error} />;
}

/** The turn's action list as buttons, with what each is about (the auction, the debt, the deal). */
function ActionPanel(props: { view: GameView; me: number; list: string[]; names: Names; connection: GameConnection; live: boolean }) {
  const { w, lang } = useWords();
  const { view, me, list, names } = props;
  const { busy, error, send } = useGameAction(props.connection);
  const [dealOpen, setDealOpen] = useState(false);
  const fields = useFields(view);
  const config = view.setup.config;
  const turn = view.status.turn;
  const mine = view.status.players.find((p) => p.user_id === me);
  const money = (amount: number) => amountText(lang, amount);
  const auction = turn.auction;
  const nextBid = auction
    ? auction.user_id_leader !== undefined
      ? auction.bid + ((config.mechanics as { auction?: { bid_increment: number } }).auction?.bid_increment ?? 0)
      : auction.bid
    : 0;
  const here = mine ? fields[mine.position] : undefined;
  const label = (action: string): string => {
    switch (action) {
      case 'purchase':
        return w('purchase', { amount: money(here?.price ?? 0) });
      case 'auction.bid':
        return w('auction.bid', { amount: money(nextBid) });
      case 'rent.pay':
      case 'bank.fee.pay':
        return w(action, { amount: money(turn.payment?.amount ?? 0) });
      case 'jail.release.pay':
        return w(action, { amount: money(turn.payment?.amount ?? config.mechanics.jail?.release_fee ?? 0) });
      default:
        return w(action as 'roll-dices');
    }
  };
  const buttons = list.filter(
    (action) => !['level.build', 'level.sell', 'mortgage.put', 'mortgage.buyback', 'contract.send'].includes(action),
  );
  const manage = list.some((action) => action.startsWith('level.') || action.startsWith('mortgage.'));
  const sideText = (side: { field_ids: number[]; cash: number }) =>
    [...side.field_ids.map((id) => fieldName(fields[id], w, lang)), ...(side.cash ? [money(side.cash)] : [])].join(', ') || w('nothing');
  return (
    <section class="card actions-panel" aria-labelledby="actions-title">
      <h2 id="actions-title">{w('actions')}</h2>
      {auction && (
        <p>
          {auction.user_id_leader !== undefined
            ? w('auctionNow', {
                field: fieldName(fields[auction.field_id], w, lang),
                bid: money(auction.bid),
                nick: names(auction.user_id_leader).nick,
              })
            : w('auctionStart', { field: fieldName(fields[auction.field_id], w, lang), bid: money(auction.bid) })}
        </p>
      )}
      {turn.payment && turn.user_id !== null && (
        <p>{w('paymentNow', { nick: names(turn.user_id).nick, amount: money(turn.payment.amount) })}</p>
      )}
      {turn.contract && (
        <p>
          {w('contractNow', {
            from: names(turn.contract[0].user_id).nick,
            to: names(turn.contract[1].user_id).nick,
            give: sideText(turn.contract[0]),
            take: sideText(turn.contract[1]),
          })}
        </p>
      )}
      <p aria-live="polite">
        {list.length > 0 ? w('yourTurn') : turn.action.user_id !== null ? w('waitingFor', { nick: names(turn.action.user_id).nick }) : ''}
      </p>
      <div class="actions">
        {buttons.map((action) => (
          <button type="button" key={action} disabled={busy || !props.live} onClick={() => void send({ action })}>
            {label(action)}
          </button>
        ))}
        {list.includes('contract.send') && (
          <button
            type="button"
            class="secondary"
            disabled={busy || !props.live}
            aria-expanded={dealOpen}
            onClick={() => setDealOpen(!dealOpen)}
          >
            {w('contract.send')}
          </button>
        )}
      </div>
      {manage && <p class="muted">{w('manageHint')}</p>}
      <Refusal error={error} />
      {dealOpen && list.includes('contract.send') && (
        <DealForm view={view} me={me} names={names} send={send} busy={busy} onSent={() => setDealOpen(false)} />
      )}
      <p>
        <button
          type="button"
          class="secondary"
          disabled={busy || !props.live}
          onClick={() => {
            if (window.confirm(w('leaveConfirm'))) void send({ action: 'leave' });
          }}
        >
          {w('leave')}
        </button>
      </p>
    </section>
  );
}

/** The management actions the list offers on the chosen field, when it is the player's. */
function FieldActions(props: { view: GameView; fieldId: number; me: number; list: string[]; connection: GameConnection }) {
  const { w } = useWords();
  const { busy, error, send } = useGameAction(props.connection);
  const state = props.view.status.fields.find((f) => f.field_id === props.fieldId);
  if (!state || state.owner_user_id !== props.me) return null;
  const offered = (['level.build', 'level.sell', 'mortgage.put', 'mortgage.buyback'] as const).filter((action) => {
    if (!props.list.includes(action)) return false;
    if (action === 'level.sell') return state.level > 0;
    if (action === 'mortgage.put') return !state.mortgage && state.level === 0;
    if (action === 'mortgage.buyback') return Boolean(state.mortgage);
    return !state.mortgage;
  });
  if (offered.length === 0) return null;
  return (
    <>
      <div class="actions">
        {offered.map((action) => (
          <button type="button" key={action} disabled={busy} onClick={() => void send({ action, field_id: props.fieldId })}>
            {w(action)}
          </button>
        ))}
      </div>
      <Refusal error={error} />
    </>
  );
}

/** A deal with another player: fields and cash both ways. */
function DealForm(props: { view: GameView; me: number; names: Names; send: Send; busy: boolean; onSent: () => void }) {
  const { w, lang } = useWords();
  const fields = useFields(props.view);
  const others = props.view.status.players.filter((p) => p.status === 0 && p.user_id !== props.me);
  const [to, setTo] = useState(String(others[0]?.user_id ?? ''));
  const [give, setGive] = useState<number[]>([]);
  const [take, setTake] = useState<number[]>([]);
  const [giveCash, setGiveCash] = useState('0');
  const [takeCash, setTakeCash] = useState('0');
  const ownedBy = (userId: number) => props.view.status.fields.filter((f) => f.owner_user_id === userId).map((f) => f.field_id);
  const toggle = (list: number[], id: number) => (list.includes(id) ? list.filter((x) => x !== id) : [...list, id]);
  const picker = (legend: string, ids: number[], chosen: number[], set: (next: number[]) => void) => (
    <fieldset class="picker">
      <legend>{legend}</legend>
      <ul class="plain">
        {ids.map((id) => (
          <li key={id}>
            <label class="check">
              <input type="checkbox" checked={chosen.includes(id)} onChange={() => set(toggle(chosen, id))} />
              {fieldName(fields[id], w, lang)}
            </label>
          </li>
        ))}
      </ul>
    </fieldset>
  );
  return (
    <Form
      label={w('contract.send')}
      onSubmit={() =>
        void props
          .send({
            action: 'contract.send',
            user_id_to: Number(to),
            give_field_ids: give.join(','),
            give_cash: Number(giveCash) || 0,
            take_field_ids: take.join(','),
            take_cash: Number(takeCash) || 0,
          })
          .then((taken) => taken && props.onSent())
      }
    >
      <div class="field">
        <label for="deal-with">{w('dealWith')}</label>
        <select
          id="deal-with"
          value={to}
          onChange={(e) => {
            setTo((e.target as HTMLSelectElement).value);
            setTake([]);
          }}
        >
          {others.map((p) => (
            <option key={p.user_id} value={String(p.user_id)}>
              {props.names(p.user_id).nick}
            </option>
          ))}
        </select>
      </div>
      {picker(w('youGive'), ownedBy(props.me), give, setGive)}
      <Field label={w('cashGive')} name="give_cash" value={giveCash} onInput={setGiveCash} inputMode="numeric" />
      {picker(w('youTake'), ownedBy(Number(to)), take, setTake)}
      <Field label={w('cashTake')} name="take_cash" value={takeCash} onInput={setTakeCash} inputMode="numeric" />
      <button type="submit" disabled={props.busy}>
        {w('sendDeal')}
      </button>
    </Form>
  );
}

const REPLAY_STEP_MS = 800;

/** A game's packets (games.getReplay) played back: play, pause, step. */
function Replay({ gameId }: { gameId: number }) {
  const { w } = useWords();
  const me = useStore(session);
  const { data, error } = useLoad(
    async () =>
      me ? ((await ok(api.POST('/api/games.getReplay', { body: { game_id: gameId } }))).data.packets as unknown as Packet[]) : [],
    [gameId, me?.user_id],
  );
  const [shown, setShown] = useState(1);
  const [playing, setPlaying] = useState(false);
  const [selected, setSelected] = useState<number | undefined>(undefined);
  const total = data?.length ?? 0;
  const view = useMemo(() => (data ? viewAt(data, shown) : undefined), [data, shown]);
  const names = useNames(view);
  useEffect(() => {
    if (!playing) return;
    if (shown >= total) return setPlaying(false);
    const timer = setTimeout(() => setShown((n) => Math.min(total, n + 1)), REPLAY_STEP_MS);
    return () => clearTimeout(timer);
  }, [playing, shown, total]);
  const title = w('replay', { id: gameId });
  if (!me)
    return (
      <Page title={title}>
        <p>
          <a href={`/signin?next=${encodeURIComponent('/table/')}`}>{w('signInToPlay')}</a>
        </p>
      </Page>
    );
  if (!data || !view) return <Page title={title}>{<Loading error={error} />}</Page>;
  return (
    <Page title={title}>
      <div class="card replay-controls">
        <p aria-live="polite">{w('packet', { n: shown, total })}</p>
        <div class="actions">
          <button type="button" class="secondary" disabled={shown <= 1} onClick={() => (setPlaying(false), setShown(1))}>
            {w('toStart')}
          </button>
          <button type="button" class="secondary" disabled={shown <= 1} onClick={() => (setPlaying(false), setShown(shown - 1))}>
            {w('stepBack')}
          </button>
          <button type="button" disabled={shown >= total && !playing} onClick={() => setPlaying(!playing)}>
            {playing ? w('pause') : w('play')}
          </button>
          <button type="button" class="secondary" disabled={shown >= total} onClick={() => (setPlaying(false), setShown(shown + 1))}>
            {w('stepForward')}
          </button>
        </div>
      </div>
      <div class="table-layout">
        <div class="board-side">
          <h2 class="visually-hidden">{w('board')}</h2>
          <Board
            view={view}
            names={names}
            selected={selected}
            onSelect={setSelected}
            centre={<Centre view={view} names={names} live={false} />}
          />
          {selected !== undefined && <FieldDetails view={view} fieldId={selected} names={names} onClose={() => setSelected(undefined)} />}
        </div>
        <div class="info-side">
          <Players view={view} names={names} />
          <Log view={view} names={names} />
        </div>
      </div>
    </Page>
  );
}
