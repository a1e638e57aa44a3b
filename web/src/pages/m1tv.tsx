import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { useI18n } from '../i18n';
import { useFeed } from '../realtime';
import { navigate } from '../router';
import { session } from '../session';
import { useStore } from '../store';
import { readTableHash, replayPath, tablePath } from '../table-links';
import { Loading, Page, useLoad } from '../ui';
import { usersById, type UserLike } from '../users';

const PAGE = 20;

function Time({ ts }: { ts: number }) {
  const date = new Date(ts * 1000);
  return <time dateTime={date.toISOString()}>{date.toLocaleString([], { dateStyle: 'short', timeStyle: 'short' })}</time>;
}

/** The players of a game by name: people by nick, computer players (ids -1, -2...) numbered. */
function useNames() {
  const { t } = useI18n();
  return (users: Map<number, UserLike>, id: number) => (id < 0 ? t('computer', { n: -id }) : (users.get(id)?.nick ?? `#${id}`));
}

async function withUsers<T extends { ids: number[] }>(games: T[]): Promise<{ games: T[]; users: Map<number, UserLike> }> {
  const users = await usersById(games.flatMap((game) => game.ids).filter((id) => id > 0));
  return { games, users };
}

function Pager({ offset, total, onChange }: { offset: number; total: number; onChange: (offset: number) => void }) {
  const { t } = useI18n();
  if (total <= PAGE) return null;
  return (
    <div class="actions">
      <button type="button" class="secondary" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - PAGE))}>
        {t('previous')}
      </button>
      <button type="button" class="secondary" disabled={offset + PAGE >= total} onClick={() => onChange(offset + PAGE)}>
        {t('next')}
      </button>
    </div>
  );
}

/**
 * `/m1tv`: the games being played, each to watch at its table; the player's own games, finished
 * ones with their replay. The reference's links to a game here (`/m1tv/#/{gs_id}/{gs_game_id}`)
 * open its table.
 */
export function LiveGames() {
  const { t } = useI18n();
  const me = useStore(session);
  useEffect(() => {
    const follow = () => {
      const target = readTableHash(window.location.hash);
      if (target?.kind === 'live') navigate(tablePath(target.gsId, target.gsGameId), true);
    };
    follow();
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  return (
    <Page title={t('liveGames')}>
      <Live />
      {me && <MyGames />}
    </Page>
  );
}

function Live() {
  const { t } = useI18n();
  const me = useStore(session);
  const name = useNames();
  const [offset, setOffset] = useState(0);
  const live = useLoad(async () => {
    const { data } = await ok(api.POST('/api/games.getLive', { body: { offset, count: PAGE } }));
    const listed = await withUsers(data.games.map((game) => ({ ...game, ids: game.players.map((p) => p.user_id) })));
    return { ...listed, count: data.count };
  }, [offset]);
  // A room's game starting is heard on the lobby's feed: the list is read again.
  useFeed(
    (event) =>
      event.type === 'room.patch' &&
      (event.patches as [number, string, unknown][]).some(([, path]) => path === 'gs_game_id') &&
      live.reload(),
    () => live.reload(),
    [offset],
  );
  return (
    <section class="card" aria-labelledby="live-title">
      <h2 id="live-title">{live.data ? t('gamesCount', { n: live.data.count }) : t('liveGames')}</h2>
      {!live.data ? (
        <Loading error={live.error} />
      ) : live.data.games.length === 0 ? (
        <p>{t('noLiveGames')}</p>
      ) : (
        <ul class="plain games" aria-label={t('liveGames')}>
          {live.data.games.map((game) => {
            const players = game.ids.map((id) => name(live.data!.users, id)).join(', ');
            const playing = me !== undefined && game.ids.includes(me.user_id);
            return (
              <li key={game.gs_game_id} class="game" data-game-id={game.gs_game_id}>
                <span class="game-players">{players}</span>
                <Time ts={game.ts_start} />
                <a
                  class="button"
                  href={tablePath(game.gs_id, game.gs_game_id)}
                  aria-label={playing ? undefined : t('watchGame', { players })}
                >
                  {playing ? t('openTable') : t('watch')}
                </a>
              </li>
            );
          })}
        </ul>
      )}
      {live.data && <Pager offset={offset} total={live.data.count} onChange={setOffset} />}
    </section>
  );
}

/** The player's games, newest first: a live one opens its table, a finished one its replay. */
function MyGames() {
  const { t } = useI18n();
  const me = useStore(session);
  const name = useNames();
  const [offset, setOffset] = useState(0);
  const mine = useLoad(async () => {
    const [{ data }, self] = await Promise.all([
      ok(api.POST('/api/games.my', { body: { offset, count: PAGE } })),
      ok(api.POST('/api/users.get', { body: { user_ids: String(me!.user_id) } })),
    ]);
    const listed = await withUsers(data.games.map((game) => ({ ...game, ids: game.user_ids })));
    // The game server of the live game the player plays (games.my names the game only).
    const user = self.data[0];
    return { ...listed, count: data.count, current: user && 'current_game' in user ? user.current_game : undefined };
  }, [offset]);
  return (
    <section class="card" aria-labelledby="my-games-title">
      <h2 id="my-games-title">{t('myGames')}</h2>
      {!mine.data ? (
        <Loading error={mine.error} />
      ) : mine.data.games.length === 0 ? (
        <p>{t('noMyGames')}</p>
      ) : (
        <ul class="plain games" aria-label={t('myGames')}>
          {mine.data.games.map((game) => {
            const current = mine.data!.current;
            const players = game.ids.map((id) => name(mine.data!.users, id)).join(', ');
            const over = game.status === 'over';
            return (
              <li key={game.game_id} class="game" data-game-id={game.game_id}>
                <span class="game-players">{players}</span>
                <Time ts={game.ts_start} />
                <span class="muted">
                  {over
                    ? game.winner_user_id !== undefined
                      ? t('wonBy', { nick: name(mine.data!.users, game.winner_user_id) })
                      : ''
                    : t('beingPlayed')}
                </span>
                {over ? (
                  <a class="button" href={replayPath(game.game_id)} aria-label={t('replayGame', { players })}>
                    {t('replay')}
                  </a>
                ) : (
                  current?.gs_game_id === String(game.game_id) && (
                    <a class="button" href={tablePath(current.gs_id, game.game_id)}>
                      {t('openTable')}
                    </a>
                  )
                )}
              </li>
            );
          })}
        </ul>
      )}
      {mine.data && <Pager offset={offset} total={mine.data.count} onChange={setOffset} />}
    </section>
  );
}
