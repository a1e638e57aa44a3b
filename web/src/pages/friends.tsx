import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { useI18n } from '../i18n';
import { Form, Loading, Page, UserRow, useLoad } from '../ui';
import { Requests } from './home';

export function Friends() {
  const { t } = useI18n();
  const friends = useLoad(async () => (await ok(api.POST('/api/friends.get', { body: { type: 'short', count: 100 } }))).data.friends, []);
  const [query, setQuery] = useState('');
  const [asked, setAsked] = useState('');
  const found = useLoad(
    async () =>
      asked.length < 1 ? undefined : (await ok(api.POST('/api/users.search', { body: { query: asked, count: 20 } }))).data.users,
    [asked],
  );
  return (
    <Page title={t('friends')}>
      <div class="columns">
        <section aria-labelledby="my-friends" class="card">
          <h2 id="my-friends">{t('myFriends')}</h2>
          {!friends.data ? (
            <Loading error={friends.error} />
          ) : friends.data.length === 0 ? (
            <p>{t('noFriends')}</p>
          ) : (
            <ul class="plain">
              {friends.data.map((user) => (
                <UserRow key={user.user_id} user={user}>
                  {user.online ? <span class="badge-online">online</span> : null}
                </UserRow>
              ))}
            </ul>
          )}
        </section>
        <div>
          <Requests />
          <section aria-labelledby="search-title" class="card">
            <h2 id="search-title">{t('searchPlayers')}</h2>
            <Form onSubmit={() => setAsked(query.trim())} label={t('searchPlayers')}>
              <div class="inline">
                <label for="player-query" class="visually-hidden">
                  {t('searchPlayers')}
                </label>
                <input id="player-query" type="search" value={query} onInput={(e) => setQuery((e.target as HTMLInputElement).value)} />
                <button type="submit">{t('search')}</button>
              </div>
            </Form>
            {found.error !== undefined && <Loading error={found.error} />}
            <ul class="plain">
              {(found.data ?? []).map((user) => (
                <UserRow key={user.user_id} user={user} />
              ))}
            </ul>
          </section>
        </div>
      </div>
    </Page>
  );
}
