import { api, ok } from '../api/client';
import { useI18n, type Key } from '../i18n';
import { lobby, roomOf } from '../rooms';
import { session } from '../session';
import { useStore } from '../store';
import { Avatar, Loading, Outcome, Page, useAction, useLoad } from '../ui';

const BADGE = 5;

/** `/profile/{id}` and `/p/{domain}`: who the player is, and what the caller can do with them. */
export function Profile({ who }: { who: string }) {
  const { t } = useI18n();
  const me = useStore(session);
  const room = roomOf(useStore(lobby), me?.user_id);
  const user = useLoad(async () => {
    const { data } = await ok(api.POST('/api/users.get', { body: { user_id: who, type: 'full' } }));
    return data[0];
  }, [who]);
  const badges = useLoad(async () => {
    try {
      const { data } = await ok(api.POST('/api/inventory.get', { body: { user_id: who, add_legacy: 0 } }));
      return 'items' in data ? data.items.filter((item) => item.type === BADGE) : [];
    } catch {
      return [];
    }
  }, [who]);
  const action = useAction();
  const profile = user.data;
  if (!profile || !('games' in profile)) return <Page title={t('profile')}>{<Loading error={user.error} />}</Page>;

  const relation = profile.friendship ?? 0;
  const act = (method: '/api/friends.add' | '/api/friends.delete' | '/api/blacklist.add' | '/api/blacklist.remove') =>
    action.run(async () => {
      await ok(api.POST(method, { body: { user_id: profile.user_id } }));
      user.reload();
    });
  const isMe = me?.user_id === profile.user_id;
  const invitable = room && !room.players.flat().includes(profile.user_id) && !room.invites.some(([id]) => id === profile.user_id);
  const invite = () =>
    action.run(async () => {
      await ok(api.POST('/api/rooms.invite', { body: { room_id: Number(room!.room_id), user_id: profile.user_id } }));
      return t('inviteSent', { nick: profile.nick });
    });
  const friendAction: [Key, '/api/friends.add' | '/api/friends.delete'] | undefined =
    relation === 0
      ? ['addFriend', '/api/friends.add']
      : relation === 1
        ? ['removeFriend', '/api/friends.delete']
        : relation === 2
          ? ['cancelRequest', '/api/friends.delete']
          : relation === 3
            ? ['acceptRequest', '/api/friends.add']
            : undefined;
  const blocked = relation === 4 || relation === 6;
  const rank = profile.rank && 'pts' in profile.rank ? `${profile.rank.id} · ${profile.rank.pts}` : '—';

  return (
    <Page title={profile.nick}>
      <div class="profile-head card">
        <Avatar src={profile.avatar} nick={profile.nick} size={96} />
        <dl class="facts">
          <dt>{t('rank')}</dt>
          <dd>{rank}</dd>
          <dt>{t('level')}</dt>
          <dd>{profile.xp_level}</dd>
          <dt>{t('games')}</dt>
          <dd>{profile.games}</dd>
          <dt>{t('wins')}</dt>
          <dd>{profile.games_wins}</dd>
        </dl>
      </div>
      {isMe ? (
        <p>{t('you')}</p>
      ) : (
        me && (
          <div class="actions">
            {friendAction && (
              <button type="button" onClick={() => act(friendAction[1])} disabled={action.busy}>
                {t(friendAction[0])}
              </button>
            )}
            <button
              type="button"
              class="secondary"
              onClick={() => act(blocked ? '/api/blacklist.remove' : '/api/blacklist.add')}
              disabled={action.busy}
            >
              {t(blocked ? 'unblock' : 'block')}
            </button>
            <a class="button" href={`/trades/new?to=${profile.user_id}`}>
              {t('offerTrade')}
            </a>
            <a class="button" href={`/messages/${profile.user_id}`}>
              {t('writeTo')}
            </a>
            {invitable && (
              <button type="button" onClick={invite} disabled={action.busy}>
                {t('inviteToRoom')}
              </button>
            )}
          </div>
        )
      )}
      <Outcome error={action.error} notice={action.notice} />
      {badges.data && badges.data.length > 0 && (
        <section aria-labelledby="badges-title" class="card">
          <h2 id="badges-title">{t('badges')}</h2>
          <ul class="grid">
            {badges.data.map((badge) => (
              <li key={badge.item_id} class="item">
                <img src={badge.image} alt="" width={64} height={64} />
                <span>{badge.title}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
    </Page>
  );
}
