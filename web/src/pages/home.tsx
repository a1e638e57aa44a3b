import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { useI18n } from '../i18n';
import { feedState, onFeedEvent, onlineCount } from '../realtime';
import { useLocation } from '../router';
import { useStore } from '../store';
import { Field, Form, Loading, Outcome, Page, UserRow, useAction, useLoad } from '../ui';
import { profilePath, type UserLike } from '../users';
import { prefetch, takeEarly } from '../prefetch';

const readOnline = async () => (await ok(api.POST('/api/friends.get', { body: { online: 1, type: 'short' } }))).data.friends;
const readRequests = async () => (await ok(api.POST('/api/friends.getRequests', { body: { type: 'short' } }))).data.requests;
const readChat = async () => (await ok(api.POST('/api/gchat.get'))).data;

/** The home screen's reads, started before its first render (main.tsx). */
export function prefetchHome(): void {
  prefetch('home.online', readOnline);
  prefetch('home.requests', readRequests);
  prefetch('home.chat', readChat);
}

interface ChatLine {
  msg_id: string;
  user_id?: number;
  text?: string;
  type: number;
  ts: number;
  case_item_proto_id?: number;
  drop_item_proto_id?: number;
  item_proto_id?: number;
  user_id_receiver?: number;
  item_proto_ids?: number[];
}

interface ProtoTitle {
  item_proto_id: number;
  title: string;
}

/** What a message says: its text, or the event it tells of (a drop, a present, a promo code). */
function chatText(line: ChatLine, protos: Map<number, string>, users: Map<number, UserLike>, t: ReturnType<typeof useI18n>['t']): string {
  const title = (id: number | undefined) => (id === undefined ? '?' : (protos.get(id) ?? `#${id}`));
  if (line.type === 2) return t('chatDrop', { item: title(line.drop_item_proto_id), case: title(line.case_item_proto_id) });
  if (line.type === 3)
    return t('chatPresent', { item: title(line.item_proto_id), nick: users.get(line.user_id_receiver ?? -1)?.nick ?? '?' });
  if (line.type === 4) return t('chatPromo', { items: (line.item_proto_ids ?? []).map(title).join(', ') });
  return line.text ?? '';
}

export function Home() {
  const { t } = useI18n();
  const welcome = useLocation().query.has('welcome');
  return (
    <Page title={t('home')}>
      {welcome && (
        <p class="notice" role="status">
          {t('signupDone')}
        </p>
      )}
      <div class="columns">
        <div>
          <OnlineFriends />
          <Requests />
        </div>
        <Chat />
      </div>
    </Page>
  );
}

function OnlineFriends() {
  const { t } = useI18n();
  const friends = useLoad(() => takeEarly('home.online', readOnline), []);
  return (
    <section aria-labelledby="online-title" class="card">
      <h2 id="online-title">{t('onlineFriends')}</h2>
      {!friends.data ? (
        <Loading error={friends.error} />
      ) : friends.data.length === 0 ? (
        <p>{t('noneOnline')}</p>
      ) : (
        <ul class="plain">
          {friends.data.map((user) => (
            <UserRow key={user.user_id} user={user} />
          ))}
        </ul>
      )}
    </section>
  );
}

export function Requests() {
  const { t } = useI18n();
  const requests = useLoad(() => takeEarly('home.requests', readRequests), []);
  const action = useAction();
  const answer = (userId: number, accept: boolean) =>
    action.run(async () => {
      if (accept) await ok(api.POST('/api/friends.add', { body: { user_id: userId } }));
      else await ok(api.POST('/api/friends.delete', { body: { user_id: userId } }));
      requests.reload();
    });
  return (
    <section aria-labelledby="requests-title" class="card">
      <h2 id="requests-title">{t('requests')}</h2>
      {!requests.data ? (
        <Loading error={requests.error} />
      ) : requests.data.length === 0 ? (
        <p>{t('noRequests')}</p>
      ) : (
        <ul class="plain">
          {requests.data.map((user) => (
            <UserRow key={user.user_id} user={user}>
              <button type="button" onClick={() => answer(user.user_id, true)} aria-label={`${t('accept')}: ${user.nick}`}>
                {t('accept')}
              </button>
              <button
                type="button"
                class="secondary"
                onClick={() => answer(user.user_id, false)}
                aria-label={`${t('decline')}: ${user.nick}`}
              >
                {t('decline')}
              </button>
            </UserRow>
          ))}
        </ul>
      )}
      <Outcome error={action.error} />
    </section>
  );
}

function Chat() {
  const { t } = useI18n();
  const state = useStore(feedState);
  const online = useStore(onlineCount);
  const [lines, setLines] = useState<ChatLine[]>([]);
  const [users, setUsers] = useState(new Map<number, UserLike>());
  const [protos, setProtos] = useState(new Map<number, string>());
  const [loaded, setLoaded] = useState<unknown>(undefined);
  const [text, setText] = useState('');
  const action = useAction();
  const list = useRef<HTMLOListElement>(null);

  const addUsers = (more: unknown[] | undefined) =>
    setUsers((known) => {
      const next = new Map(known);
      for (const user of (more ?? []) as UserLike[]) next.set(user.user_id, user);
      return next;
    });
  const addProtos = (more: unknown[] | undefined) =>
    setProtos((known) => {
      const next = new Map(known);
      for (const proto of (more ?? []) as ProtoTitle[]) next.set(proto.item_proto_id, proto.title);
      return next;
    });
  const addLines = (more: ChatLine[]) =>
    setLines((known) => {
      const ids = new Set(known.map((line) => line.msg_id));
      return [...known, ...more.filter((line) => !ids.has(line.msg_id))].slice(-200);
    });

  useEffect(() => {
    takeEarly('home.chat', readChat).then(
      (data) => {
        addUsers(data.users);
        addProtos(data.item_protos);
        addLines(data.messages as ChatLine[]);
        setLoaded(true);
      },
      (error: unknown) => setLoaded(error),
    );
    return onFeedEvent((event, lists) => {
      if (event.type === 'gchat.add') {
        addUsers(lists.users_data);
        addProtos(lists.item_protos);
        addLines(((lists.messages ?? []) as ChatLine[]).filter((m) => m.msg_id === event.msg_id));
      } else if (event.type === 'gchat.delete') setLines((known) => known.filter((line) => line.msg_id !== event.msg_id));
    });
  }, []);
  useEffect(() => {
    // The newest message in view, scrolling the list alone (never the page).
    if (list.current) list.current.scrollTop = list.current.scrollHeight;
  }, [lines.length]);

  const send = () =>
    action.run(async () => {
      await ok(api.POST('/api/gchat.send', { body: { message: text } }));
      setText('');
    });

  return (
    <section aria-labelledby="chat-title" class="card chat">
      <h2 id="chat-title">{t('chat')}</h2>
      <p class="muted" role="status">
        {state === 'live' ? t('live') : t('offline')}
        {online !== undefined && ` · ${t('online', { n: online })}`}
      </p>
      {loaded !== true ? (
        <Loading error={loaded} />
      ) : (
        <ol class="chat-lines" ref={list} aria-live="polite" aria-label={t('chat')}>
          {lines.map((line) => {
            const author = line.user_id === undefined ? undefined : users.get(line.user_id);
            return (
              <li key={line.msg_id}>
                <time dateTime={new Date(line.ts * 1000).toISOString()}>
                  {new Date(line.ts * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}
                </time>{' '}
                {author && <a href={profilePath(author)}>{author.nick}</a>}
                {author && ': '}
                <span class={line.type === 1 ? 'chat-text' : 'chat-event'}>{chatText(line, protos, users, t)}</span>
              </li>
            );
          })}
        </ol>
      )}
      <Form onSubmit={send}>
        <div class="inline">
          <Field label={t('say')} name="message" value={text} onInput={setText} required />
          <button type="submit" disabled={action.busy || text.trim() === ''}>
            {t('send')}
          </button>
        </div>
      </Form>
      <Outcome error={action.error} />
    </section>
  );
}
