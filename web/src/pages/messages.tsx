import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { components } from '../api/schema';
import { useI18n } from '../i18n';
import { useFeed, type FeedEvent } from '../realtime';
import { session } from '../session';
import { useStore } from '../store';
import { Field, Form, Loading, Outcome, Page, UserRow, useAction, useLoad } from '../ui';
import type { UserLike } from '../users';

type Message = components['schemas']['PrivateMessage'];

const PAGE = 30;
/** `data.type` of an `im.sync` event. */
const NEW = 1;
const READ = 2;
const DELETED = 3;

interface SyncEvent extends FeedEvent {
  data: { type: number; msg_id: number; dialog: { user_id: number } };
  message?: Message;
  new_counter?: number;
}

const usersOf = (list: unknown[]) => new Map((list as UserLike[]).map((user) => [user.user_id, user]));

function Time({ ts }: { ts: number }) {
  const date = new Date(ts * 1000);
  return <time dateTime={date.toISOString()}>{date.toLocaleString([], { dateStyle: 'short', timeStyle: 'short' })}</time>;
}

/** `/messages`: the conversations, newest activity first, each with its count of unread messages. */
export function Dialogs() {
  const { t } = useI18n();
  const [more, setMore] = useState<{ dialogs: DialogRow[]; users: Map<number, UserLike>; done: boolean } | undefined>();
  const first = useLoad(() => loadDialogs(undefined), []);
  useFeed(
    (event) => event.type === 'im.sync' && (setMore(undefined), first.reload()),
    () => (setMore(undefined), first.reload()),
  );
  const action = useAction();
  const shown = first.data && {
    dialogs: [...first.data.dialogs, ...(more?.dialogs ?? [])],
    users: new Map([...first.data.users, ...(more?.users ?? [])]),
    done: more ? more.done : first.data.done,
  };
  const loadMore = () =>
    action.run(async () => {
      const last = shown!.dialogs.at(-1)!;
      const next = await loadDialogs(last.message.msg_id);
      setMore({
        dialogs: [...(more?.dialogs ?? []), ...next.dialogs],
        users: new Map([...(more?.users ?? []), ...next.users]),
        done: next.done,
      });
    });

  return (
    <Page title={t('messages')}>
      {!shown ? (
        <Loading error={first.error} />
      ) : shown.dialogs.length === 0 ? (
        <p>{t('noDialogs')}</p>
      ) : (
        <ul class="plain dialogs" aria-label={t('dialogs')}>
          {shown.dialogs.map((dialog) => {
            const partner = shown.users.get(dialog.user_id) ?? { user_id: dialog.user_id, nick: `#${dialog.user_id}` };
            return (
              <UserRow key={dialog.user_id} user={partner} href={`/messages/${dialog.user_id}`}>
                {dialog.new_counter > 0 && (
                  <span class="badge" aria-label={t('unread', { n: dialog.new_counter })}>
                    {dialog.new_counter}
                  </span>
                )}
                <span class="muted snippet">{dialog.message.text}</span>
                <Time ts={dialog.message.ts_created} />
              </UserRow>
            );
          })}
        </ul>
      )}
      {shown && !shown.done && (
        <button type="button" class="secondary" onClick={loadMore} disabled={action.busy}>
          {t('older')}
        </button>
      )}
      <Outcome error={action.error} />
    </Page>
  );
}

type DialogRow = { message: Message; new_counter: number; user_id: number };

async function loadDialogs(before: number | undefined) {
  const { data } = await ok(api.POST('/api/im.dialogsGet', { body: { count: PAGE, ...(before ? { id_last: before } : {}) } }));
  return { dialogs: data.dialogs as DialogRow[], users: usersOf(data.users_data), done: data.dialogs.length < PAGE };
}

/** `/messages/{user_id}`: one conversation, older pages on demand, new messages and read marks live. */
export function Conversation({ partnerId }: { partnerId: number }) {
  const { t } = useI18n();
  const me = useStore(session);
  const [messages, setMessages] = useState<Message[]>([]);
  const [users, setUsers] = useState(new Map<number, UserLike>());
  const [done, setDone] = useState(false);
  const [text, setText] = useState('');
  const list = useRef<HTMLOListElement>(null);
  const stickToEnd = useRef(true);
  const action = useAction();
  const sendAction = useAction();

  const merge = (more: Message[]) =>
    setMessages((known) => {
      const byId = new Map(known.map((m) => [m.msg_id, m]));
      for (const message of more) byId.set(message.msg_id, message);
      return [...byId.values()].sort((a, b) => a.msg_id - b.msg_id);
    });
  const loadPage = async (before?: number) => {
    const { data } = await ok(
      api.POST('/api/im.historyGet', { body: { user_id: partnerId, count: PAGE, ...(before ? { id_last: before } : {}) } }),
    );
    setUsers((known) => new Map([...known, ...usersOf(data.users_data)]));
    if (data.messages.length < PAGE) setDone(true);
    return data.messages;
  };
  const first = useLoad(async () => {
    setMessages([]);
    setDone(false);
    stickToEnd.current = true;
    merge(await loadPage());
    return true;
  }, [partnerId]);

  const onEvent = (raw: FeedEvent) => {
    if (raw.type !== 'im.sync') return;
    const event = raw as SyncEvent;
    if (event.data.dialog.user_id !== partnerId) return;
    if (event.data.type === NEW && event.message) {
      stickToEnd.current = true;
      merge([event.message]);
      // Seen as it arrives: reading the newest page marks it read, and the partner is told.
      if (event.message.user_id === partnerId && document.visibilityState === 'visible')
        void ok(api.POST('/api/im.historyGet', { body: { user_id: partnerId, count: 1 } })).catch(() => undefined);
    } else if (event.data.type === READ) {
      setMessages((known) => known.map((m) => (m.user_id !== partnerId && m.msg_id <= event.data.msg_id ? { ...m, is_read: 1 } : m)));
    } else if (event.data.type === DELETED) {
      setMessages((known) => known.filter((m) => m.msg_id !== event.data.msg_id));
    }
  };
  useFeed(onEvent, () => first.reload(), [partnerId]);

  useEffect(() => {
    if (stickToEnd.current && list.current) list.current.scrollTop = list.current.scrollHeight;
    stickToEnd.current = false;
  }, [messages]);

  const older = () =>
    action.run(async () => {
      merge(await loadPage(messages[0]?.msg_id));
    });
  const send = () =>
    sendAction.run(async () => {
      const sendId = crypto.randomUUID();
      const { data } = await ok(api.POST('/api/im.send', { body: { user_id: partnerId, text, send_id: sendId } }));
      stickToEnd.current = true;
      merge([
        { msg_id: data.msg_id, is_read: 0, text: text.trim(), ts_created: Math.floor(Date.now() / 1000), type: 1, user_id: me!.user_id },
      ]);
      setText('');
    });
  const remove = (msgId: number) =>
    action.run(async () => {
      await ok(api.POST('/api/im.delete', { body: { msg_id: msgId } }));
      setMessages((known) => known.filter((m) => m.msg_id !== msgId));
    });

  const partner = users.get(partnerId);
  const title = partner ? t('conversationWith', { nick: partner.nick }) : t('messages');
  return (
    <Page title={title}>
      <p>
        <a href="/messages">{t('allDialogs')}</a>
      </p>
      {first.data === undefined ? (
        <Loading error={first.error} />
      ) : (
        <section class="card conversation">
          {!done && (
            <button type="button" class="secondary" onClick={older} disabled={action.busy}>
              {t('older')}
            </button>
          )}
          {messages.length === 0 && <p>{t('noMessages')}</p>}
          <ol class="chat-lines" ref={list} aria-live="polite" aria-label={title} tabIndex={0}>
            {messages.map((message) => {
              const mine = message.user_id !== partnerId;
              return (
                <li key={message.msg_id} class={mine ? 'mine' : 'theirs'} data-msg-id={message.msg_id}>
                  <Time ts={message.ts_created} /> <strong>{mine ? t('me') : (partner?.nick ?? '?')}</strong>:{' '}
                  <span class="chat-text">{message.text}</span>
                  {mine && <span class="muted read-mark"> · {message.is_read ? t('read') : t('sent')}</span>}
                  {mine && (
                    <button
                      type="button"
                      class="link"
                      onClick={() => remove(message.msg_id)}
                      aria-label={`${t('delete')}: ${message.text}`}
                    >
                      {t('delete')}
                    </button>
                  )}
                </li>
              );
            })}
          </ol>
          <Form onSubmit={send}>
            <div class="inline">
              <Field label={t('writeMessage')} name="text" value={text} onInput={setText} required />
              <button type="submit" disabled={sendAction.busy || text.trim() === ''}>
                {t('send')}
              </button>
            </div>
          </Form>
          <Outcome error={sendAction.error ?? action.error} />
        </section>
      )}
    </Page>
  );
}
