import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, ok, ApiFailure } from '../api/client';
import { useStore } from '../store';
import { Field, Form, Loading, Outcome, Page, useAction, useLoad } from '../ui';
import { adminCall, adminKey, setAdminKey } from './call';
import { useWords, type Word } from './words';

type Section = 'users' | 'chat' | 'messages' | 'market' | 'apps' | 'promo' | 'audit';
const SECTIONS: Section[] = ['users', 'chat', 'messages', 'market', 'apps', 'promo', 'audit'];
const PAGE = 20;

const when = (ts: number, lang: string) => (ts ? new Date(ts * 1000).toLocaleString(lang) : '—');
const numberOr = (text: string) => (text.trim() === '' ? undefined : Number(text));

/** `/admin/{section}/{id}`: the operator console, behind the admin key. */
export default function AdminConsole({ section, id }: { section?: string; id?: string }) {
  const { w } = useWords();
  const key = useStore(adminKey);
  const [refusal, setRefusal] = useState<Word | undefined>(undefined);
  if (!key) return <Gate refusal={refusal} onRefused={setRefusal} />;
  const current = (SECTIONS as string[]).includes(section ?? '') ? (section as Section) : 'users';
  return (
    <Page title={`${w('console')} · ${w(current)}`}>
      <nav aria-label={w('console')} class="tabs">
        {SECTIONS.map((name) => (
          <a key={name} href={`/admin/${name}`} aria-current={name === current ? 'page' : undefined}>
            {w(name)}
          </a>
        ))}
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setRefusal(undefined);
            setAdminKey(undefined);
          }}
        >
          {w('leave')}
        </button>
      </nav>
      {current === 'users' && (id ? <UserView userId={id} /> : <UserSearch />)}
      {current === 'chat' && <ChatModeration />}
      {current === 'messages' && <MessagesModeration />}
      {current === 'market' && <Listings />}
      {current === 'apps' && <Apps />}
      {current === 'promo' && <Promocodes />}
      {current === 'audit' && <AuditLog />}
    </Page>
  );
}

function Gate({ refusal, onRefused }: { refusal?: Word; onRefused: (word: Word | undefined) => void }) {
  const { w } = useWords();
  const [key, setKey] = useState('');
  const action = useAction();
  const enter = () =>
    action.run(async () => {
      onRefused(undefined);
      try {
        // A call every key may make: the answer says whether the key is the server's.
        await adminCall('/api/admin.auditLog', { count: 1 }, key);
        setKey('');
        setAdminKey(key);
      } catch (error) {
        if (error instanceof ApiFailure && (error.code === 1 || error.code === 4)) onRefused(error.code === 1 ? 'refused' : 'disabled');
        else throw error;
      }
    });
  return (
    <Page title={w('console')}>
      <p>{w('gate')}</p>
      {refusal && (
        <p class="error" role="alert">
          {w(refusal)}
        </p>
      )}
      <Form onSubmit={enter} label={w('console')}>
        <Field label={w('key')} name="admin-key" type="password" autocomplete="off" value={key} onInput={setKey} required />
        <button type="submit" disabled={action.busy || key === ''}>
          {w('enter')}
        </button>
      </Form>
      <Outcome error={action.error} />
    </Page>
  );
}

function Card({ title, children }: { title: string; children: ComponentChildren }) {
  const [id] = useState(() => `card-${Math.random().toString(36).slice(2)}`);
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

function Pager({ offset, total, onChange }: { offset: number; total: number; onChange: (offset: number) => void }) {
  const { w } = useWords();
  return (
    <div class="actions">
      <span class="muted">{w('total', { n: total })}</span>
      {total > PAGE && (
        <>
          <button type="button" class="secondary" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - PAGE))}>
            {w('previous')}
          </button>
          <button type="button" class="secondary" disabled={offset + PAGE >= total} onClick={() => onChange(offset + PAGE)}>
            {w('next')}
          </button>
        </>
      )}
    </div>
  );
}

function UserSearch() {
  const { w } = useWords();
  const [query, setQuery] = useState('');
  const [applied, setApplied] = useState('');
  const [offset, setOffset] = useState(0);
  const found = useLoad(
    async () => (applied ? adminCall('/api/admin.searchUsers', { query: applied, offset, count: PAGE }) : undefined),
    [applied, offset],
  );
  return (
    <Card title={w('find')}>
      <Form
        onSubmit={() => {
          setOffset(0);
          setApplied(query.trim());
        }}
        label={w('find')}
      >
        <div class="inline">
          <Field label={w('query')} name="query" type="search" value={query} onInput={setQuery} required maxLength={254} />
          <button type="submit">{w('find')}</button>
        </div>
      </Form>
      <Outcome error={found.error} />
      {found.data &&
        (found.data.users.length === 0 ? (
          <p>{w('noRows')}</p>
        ) : (
          <table>
            <caption class="visually-hidden">{w('found')}</caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">{w('nick')}</th>
                <th scope="col">{w('domainShort')}</th>
                <th scope="col">{w('emailShort')}</th>
                <th scope="col">{w('state')}</th>
              </tr>
            </thead>
            <tbody>
              {found.data.users.map((user) => (
                <tr key={user.user_id}>
                  <td>{user.user_id}</td>
                  <td>
                    <a href={`/admin/users/${user.user_id}`}>
                      {user.nick} (#{user.user_id})
                    </a>
                  </td>
                  <td>{user.domain ?? '—'}</td>
                  <td>{user.email ?? '—'}</td>
                  <td>{user.global_ban ? w('banned') : user.bot_owner !== undefined ? w('bot') : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      {found.data && <Pager offset={offset} total={found.data.count} onChange={setOffset} />}
    </Card>
  );
}

function UserView({ userId }: { userId: string }) {
  const { w, t, lang } = useWords();
  const account = useLoad(async () => (await adminCall('/api/admin.getUser', { user_id: userId })).user, [userId]);
  const action = useAction();
  const [minutes, setMinutes] = useState('60');
  const [protoId, setProtoId] = useState('');
  const [copies, setCopies] = useState('1');
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [roles, setRoles] = useState<Record<'moderator' | 'superadmin' | 'vip', boolean> | undefined>(undefined);
  // Each action done here is read again in the account's audit below.
  const [actions, setActions] = useState(0);
  const user = account.data;
  if (!user) return <Loading error={account.error} />;
  const shownRoles = roles ?? { moderator: user.moderator === 1, superadmin: user.superadmin === 1, vip: user.vip === 1 };
  const act = (what: string, call: () => Promise<unknown>) =>
    action.run(async () => {
      await call();
      account.reload();
      setActions((n) => n + 1);
      return w('done', { what });
    });
  const id = user.user_id;
  return (
    <>
      <Card title={`${user.nick} (#${id})`}>
        <dl class="facts">
          <dt>{t('email')}</dt>
          <dd>{user.email ?? '—'}</dd>
          <dt>{t('domain')}</dt>
          <dd>{user.domain ?? '—'}</dd>
          <dt>{w('roles')}</dt>
          <dd>
            {(['moderator', 'superadmin', 'vip'] as const)
              .filter((role) => user[role] === 1)
              .map((role) => w(role))
              .join(', ') || '—'}
          </dd>
          <dt>{w('ban')}</dt>
          <dd>{user.global_ban ? w('banned') : t('no')}</dd>
          <dt>{w('mute')}</dt>
          <dd>{user.muted_until > 0 ? w('mutedUntil', { ts: when(user.muted_until, lang) }) : t('no')}</dd>
          <dt>{t('twoFactor')}</dt>
          <dd>{user.totp ? t('yes') : t('no')}</dd>
        </dl>
        <div class="actions">
          {user.global_ban ? (
            <button type="button" onClick={() => act(w('unban'), () => adminCall('/api/admin.unbanUser', { user_id: id }))}>
              {w('unban')}
            </button>
          ) : (
            <button type="button" onClick={() => act(w('ban'), () => adminCall('/api/admin.banUser', { user_id: id }))}>
              {w('ban')}
            </button>
          )}
          <button
            type="button"
            class="secondary"
            onClick={() => act(w('endSessions'), () => adminCall('/api/admin.killSessions', { user_id: id }))}
          >
            {w('endSessions')}
          </button>
          {user.totp === 1 && (
            <button
              type="button"
              class="secondary"
              onClick={() => act(w('clearTotp'), () => adminCall('/api/admin.clearTotp', { user_id: id }))}
            >
              {w('clearTotp')}
            </button>
          )}
        </div>
        <Outcome error={action.error} notice={action.notice} />
      </Card>
      <Card title={w('mute')}>
        <Form
          onSubmit={() => act(w('mute'), () => adminCall('/api/admin.muteUser', { user_id: id, duration: Number(minutes) * 60 }))}
          label={w('mute')}
        >
          <div class="inline">
            <Field label={w('muteMinutes')} name="minutes" inputMode="numeric" value={minutes} onInput={setMinutes} required />
            <button type="submit">{w('mute')}</button>
            {user.muted_until > 0 && (
              <button
                type="button"
                class="secondary"
                onClick={() => act(w('unmute'), () => adminCall('/api/admin.muteUser', { user_id: id, muted_until: 0 }))}
              >
                {w('unmute')}
              </button>
            )}
          </div>
        </Form>
      </Card>
      <Card title={w('roles')}>
        <Form
          onSubmit={() => act(w('saveRoles'), () => adminCall('/api/admin.updateUser', { user_id: id, ...bits(shownRoles) }))}
          label={w('roles')}
        >
          {(['moderator', 'superadmin', 'vip'] as const).map((role) => (
            <label key={role} class="check">
              <input
                type="checkbox"
                checked={shownRoles[role]}
                onChange={(e) => setRoles({ ...shownRoles, [role]: (e.target as HTMLInputElement).checked })}
              />{' '}
              {w(role)}
            </label>
          ))}
          <button type="submit">{w('saveRoles')}</button>
        </Form>
      </Card>
      <Card title={w('grantItems')}>
        <Form
          onSubmit={() =>
            act(w('grantItems'), () =>
              adminCall('/api/admin.grantItems', { user_id: id, item_proto_id: Number(protoId), copies: Number(copies) }),
            )
          }
          label={w('grantItems')}
        >
          <div class="inline">
            <Field label={w('protoId')} name="item_proto_id" inputMode="numeric" value={protoId} onInput={setProtoId} required />
            <Field label={w('copies')} name="copies" inputMode="numeric" value={copies} onInput={setCopies} required />
            <button type="submit">{w('grant')}</button>
          </div>
        </Form>
      </Card>
      <Card title={w('money')}>
        <Form
          onSubmit={() => act(w('grantMoney'), () => adminCall('/api/admin.grantMoney', { user_id: id, amount: Number(amount), reason }))}
          label={w('money')}
        >
          <div class="inline">
            <Field label={w('amount')} name="amount" value={amount} onInput={setAmount} />
            <Field label={w('reason')} name="reason" value={reason} onInput={setReason} required />
          </div>
          <div class="actions">
            <button type="submit" disabled={amount === ''}>
              {w('grantMoney')}
            </button>
            <button
              type="button"
              class="secondary"
              disabled={amount === '' || reason === ''}
              onClick={() =>
                act(w('revokeMoney'), () => adminCall('/api/admin.revokeMoney', { user_id: id, amount: Number(amount), reason }))
              }
            >
              {w('revokeMoney')}
            </button>
            <button
              type="button"
              class="secondary"
              disabled={reason === ''}
              onClick={() => act(w('freeze'), () => adminCall('/api/admin.freezeMarket', { user_id: id, frozen: 1, reason }))}
            >
              {w('freeze')}
            </button>
            <button
              type="button"
              class="secondary"
              disabled={reason === ''}
              onClick={() => act(w('unfreeze'), () => adminCall('/api/admin.freezeMarket', { user_id: id, frozen: 0, reason }))}
            >
              {w('unfreeze')}
            </button>
          </div>
        </Form>
      </Card>
      <Listings userId={id} />
      <AuditLog target={`user:${id}`} round={actions} />
    </>
  );
}

const bits = (flags: Record<string, boolean>) => Object.fromEntries(Object.entries(flags).map(([name, on]) => [name, on ? 1 : 0]));

function Listings({ userId }: { userId?: number }) {
  const { w, lang } = useWords();
  const [offset, setOffset] = useState(0);
  const [reason, setReason] = useState('');
  const listings = useLoad(
    () => adminCall('/api/admin.listListings', { offset, count: PAGE, ...(userId ? { user_id: userId } : {}) }),
    [offset, userId],
  );
  const action = useAction();
  const cancel = (thingId: number) =>
    action.run(async () => {
      await adminCall('/api/admin.cancelListing', { thing_id: thingId, reason });
      listings.reload();
      return w('done', { what: `${w('cancelListing')} #${thingId}` });
    });
  return (
    <Card title={w('listings')}>
      <Field label={w('reason')} name="listing-reason" value={reason} onInput={setReason} />
      <Outcome error={action.error} notice={action.notice} />
      {!listings.data ? (
        <Loading error={listings.error} />
      ) : listings.data.listings.length === 0 ? (
        <p>{w('noRows')}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">{w('userId')}</th>
              <th scope="col">{w('protoId')}</th>
              <th scope="col">{w('amount')}</th>
              <th scope="col">⌚</th>
              <th scope="col">
                <span class="visually-hidden">{w('cancelListing')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {listings.data.listings.map((listing) => (
              <tr key={listing.listing_id}>
                <td>{listing.thing_id}</td>
                <td>
                  <a href={`/admin/users/${listing.user_id}`}>{listing.user_id}</a>
                </td>
                <td>{listing.thing_prototype_id}</td>
                <td>{listing.price}</td>
                <td>{when(listing.ts_listed, lang)}</td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    disabled={action.busy || reason.trim() === ''}
                    onClick={() => cancel(listing.thing_id)}
                    aria-label={`${w('cancelListing')} #${listing.thing_id}`}
                  >
                    {w('cancelListing')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {listings.data && <Pager offset={offset} total={listings.data.count} onChange={setOffset} />}
    </Card>
  );
}

function ChatModeration() {
  const { w, lang } = useWords();
  const lines = useLoad(async () => (await ok(api.POST('/api/gchat.get'))).data, []);
  const action = useAction();
  const [modes, setModes] = useState<{ closed: boolean; slowmode: boolean; emoteonly: boolean } | undefined>(undefined);
  const [interval, setInterval] = useState('');
  const status = useLoad(async () => {
    const answer = await adminCall('/api/admin.getChatStatus', {});
    setModes(answer.status);
    setInterval(String(answer.slowmode_interval));
    return answer;
  }, []);
  const [system, setSystem] = useState({
    type: '4',
    user_id: '',
    item_proto_ids: '',
    case_item_proto_id: '',
    drop_item_proto_id: '',
    user_id_receiver: '',
    item_proto_id: '',
  });
  const remove = (msgId: string) =>
    action.run(async () => {
      await adminCall('/api/admin.deleteMessage', { msg_id: msgId });
      lines.reload();
      return w('done', { what: `${w('deleteMessage')} ${msgId}` });
    });
  const applyModes = () =>
    action.run(async () => {
      const answer = await adminCall('/api/admin.setChatStatus', {
        ...bits(modes ?? {}),
        ...(interval ? { slowmode_interval: Number(interval) } : {}),
      });
      setModes(answer.status);
      setInterval(String(answer.slowmode_interval));
      status.reload();
      return w('done', { what: w('chatModes') });
    });
  const post = () =>
    action.run(async () => {
      const fields = Object.fromEntries(Object.entries(system).filter(([, value]) => value.trim() !== ''));
      const numeric = Object.fromEntries(
        Object.entries(fields).map(([name, value]) => [name, name === 'item_proto_ids' ? value : Number(value)]),
      );
      await adminCall('/api/admin.postSystemMessage', numeric as { type: number; user_id: number });
      lines.reload();
      return w('done', { what: w('systemMessage') });
    });
  const users = new Map(((lines.data?.users ?? []) as { user_id: number; nick: string }[]).map((user) => [user.user_id, user.nick]));
  return (
    <>
      <Outcome error={action.error} notice={action.notice} />
      <Card title={w('chatModes')}>
        {!status.data || !modes ? (
          <Loading error={status.error} />
        ) : (
          <>
            <p role="status">
              {w('chatNow', {
                modes:
                  (['closed', 'slowmode', 'emoteonly'] as const)
                    .filter((mode) => status.data?.status[mode])
                    .map((mode) => w(mode))
                    .join(', ') || w('chatOpen'),
                interval: status.data.slowmode_interval,
              })}
            </p>
            <Form onSubmit={applyModes} label={w('chatModes')}>
              {(['closed', 'slowmode', 'emoteonly'] as const).map((mode) => (
                <label key={mode} class="check">
                  <input
                    type="checkbox"
                    checked={modes[mode]}
                    onChange={(e) => setModes({ ...modes, [mode]: (e.target as HTMLInputElement).checked })}
                  />{' '}
                  {w(mode)}
                </label>
              ))}
              <Field label={w('slowInterval')} name="slowmode_interval" inputMode="numeric" value={interval} onInput={setInterval} />
              <button type="submit">{w('apply')}</button>
            </Form>
          </>
        )}
      </Card>
      <Card title={w('lines')}>
        {!lines.data ? (
          <Loading error={lines.error} />
        ) : (
          <ol class="plain">
            {(lines.data.messages as { msg_id: string; user_id?: number; text?: string; type: number; ts: number }[])
              .slice(-50)
              .map((line) => (
                <li key={line.msg_id} class="user-row">
                  <span class="muted">{when(line.ts, lang)}</span>
                  <span>
                    {line.user_id !== undefined ? `${users.get(line.user_id) ?? line.user_id}: ` : ''}
                    {line.text ?? `(${line.type})`}
                  </span>
                  <button
                    type="button"
                    class="secondary"
                    onClick={() => remove(line.msg_id)}
                    aria-label={`${w('deleteMessage')}: ${line.text ?? line.msg_id}`}
                  >
                    {w('deleteMessage')}
                  </button>
                </li>
              ))}
          </ol>
        )}
      </Card>
      <Card title={w('systemMessage')}>
        <Form onSubmit={post} label={w('systemMessage')}>
          {(
            [
              ['type', 'systemType'],
              ['user_id', 'userId'],
              ['item_proto_ids', 'itemProtoIds'],
              ['case_item_proto_id', 'caseProtoId'],
              ['drop_item_proto_id', 'dropProtoId'],
              ['user_id_receiver', 'receiverId'],
              ['item_proto_id', 'protoId'],
            ] as const
          ).map(([name, label]) => (
            <Field
              key={name}
              label={w(label)}
              name={name}
              value={system[name]}
              onInput={(value) => setSystem({ ...system, [name]: value })}
            />
          ))}
          <button type="submit">{w('post')}</button>
        </Form>
      </Card>
    </>
  );
}

function MessagesModeration() {
  const { w, lang } = useWords();
  const [userId, setUserId] = useState('');
  const [partnerId, setPartnerId] = useState('');
  const [shown, setShown] = useState<{ user: number; partner: number } | undefined>(undefined);
  const history = useLoad(
    async () => (shown ? adminCall('/api/admin.imHistory', { user_id: shown.user, partner_id: shown.partner, count: 100 }) : undefined),
    [shown?.user, shown?.partner],
  );
  const action = useAction();
  const remove = (msgId: number) =>
    action.run(async () => {
      await adminCall('/api/admin.imDelete', { msg_id: msgId });
      history.reload();
      return w('done', { what: `${w('deleteMessage')} #${msgId}` });
    });
  const nicks = new Map(((history.data?.users_data ?? []) as { user_id: number; nick: string }[]).map((user) => [user.user_id, user.nick]));
  return (
    <Card title={w('readConversation')}>
      <Form onSubmit={() => setShown({ user: Number(userId), partner: Number(partnerId) })} label={w('readConversation')}>
        <div class="inline">
          <Field label={w('userId')} name="user_id" inputMode="numeric" value={userId} onInput={setUserId} required />
          <Field label={w('partnerId')} name="partner_id" inputMode="numeric" value={partnerId} onInput={setPartnerId} required />
          <button type="submit">{w('open')}</button>
        </div>
      </Form>
      <Outcome error={action.error ?? history.error} notice={action.notice} />
      {history.data &&
        (history.data.messages.length === 0 ? (
          <p>{w('noRows')}</p>
        ) : (
          <ol class="plain">
            {history.data.messages.map((message) => (
              <li key={message.msg_id} class="user-row">
                <span class="muted">{when(message.ts_created, lang)}</span>
                <span>
                  {nicks.get(message.user_id) ?? message.user_id}: {message.text}
                </span>
                <button
                  type="button"
                  class="secondary"
                  onClick={() => remove(message.msg_id)}
                  aria-label={`${w('deleteMessage')}: ${message.text}`}
                >
                  {w('deleteMessage')}
                </button>
              </li>
            ))}
          </ol>
        ))}
    </Card>
  );
}

function Apps() {
  const { w, lang } = useWords();
  const apps = useLoad(async () => (await adminCall('/api/admin.listApps', {})).apps, []);
  const action = useAction();
  const [name, setName] = useState('');
  const [uris, setUris] = useState('');
  const [scopes, setScopes] = useState('1');
  const [isPublic, setPublic] = useState(false);
  const create = () =>
    action.run(async () => {
      const answer = await adminCall('/api/admin.createApp', {
        name,
        redirect_uris: uris,
        scopes: Number(scopes),
        public_client: isPublic ? 1 : 0,
      });
      apps.reload();
      setName('');
      setUris('');
      return answer.app_secret ? w('secretOnce', { secret: answer.app_secret }) : w('done', { what: answer.app.name });
    });
  const disable = (appId: number) =>
    action.run(async () => {
      await adminCall('/api/admin.disableApp', { app_id: appId });
      apps.reload();
      return w('done', { what: `${w('disable')} #${appId}` });
    });
  return (
    <>
      <Outcome error={action.error} notice={action.notice} />
      <Card title={w('apps')}>
        {!apps.data ? (
          <Loading error={apps.error} />
        ) : apps.data.length === 0 ? (
          <p>{w('noRows')}</p>
        ) : (
          <ul class="plain">
            {apps.data.map((app) => (
              <li key={app.app_id} class="user-row">
                <span>
                  #{app.app_id} {app.name} · {app.redirect_uris.join(', ')} · {app.scopes} · {when(app.created_at, lang)}
                  {app.active ? '' : ' · ✕'}
                </span>
                {app.active === 1 && (
                  <button type="button" class="secondary" onClick={() => disable(app.app_id)} aria-label={`${w('disable')}: ${app.name}`}>
                    {w('disable')}
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </Card>
      <Card title={w('createApp')}>
        <Form onSubmit={create} label={w('createApp')}>
          <Field label={w('name')} name="name" value={name} onInput={setName} required />
          <Field label={w('redirectUris')} name="redirect_uris" value={uris} onInput={setUris} required />
          <Field label={w('scopes')} name="scopes" inputMode="numeric" value={scopes} onInput={setScopes} />
          <label class="check">
            <input type="checkbox" checked={isPublic} onChange={(e) => setPublic((e.target as HTMLInputElement).checked)} />{' '}
            {w('publicClient')}
          </label>
          <button type="submit">{w('create')}</button>
        </Form>
      </Card>
    </>
  );
}

function Promocodes() {
  const { w, lang } = useWords();
  const [offset, setOffset] = useState(0);
  const codes = useLoad(() => adminCall('/api/admin.listPromocodes', { offset, count: PAGE }), [offset]);
  const action = useAction();
  const [code, setCode] = useState('');
  const [protos, setProtos] = useState('');
  const [maxUses, setMaxUses] = useState('');
  const create = () =>
    action.run(async () => {
      const uses = numberOr(maxUses);
      await adminCall('/api/admin.createPromocode', { code, item_proto_ids: protos, ...(uses !== undefined ? { max_uses: uses } : {}) });
      codes.reload();
      setCode('');
      return w('done', { what: code });
    });
  const disable = (which: string) =>
    action.run(async () => {
      await adminCall('/api/admin.disablePromocode', { code: which });
      codes.reload();
      return w('done', { what: `${w('disable')} ${which}` });
    });
  return (
    <>
      <Outcome error={action.error} notice={action.notice} />
      <Card title={w('promo')}>
        {!codes.data ? (
          <Loading error={codes.error} />
        ) : codes.data.promocodes.length === 0 ? (
          <p>{w('noRows')}</p>
        ) : (
          <ul class="plain">
            {codes.data.promocodes.map((promo) => (
              <li key={promo.code} class="user-row">
                <span>
                  <code>{promo.code}</code> · {promo.item_proto_ids.join(', ')} · {promo.uses}
                  {promo.max_uses !== undefined ? ` / ${promo.max_uses}` : ''} · {when(promo.created_at, lang)}
                  {promo.disabled ? ' · ✕' : ''}
                </span>
                {promo.disabled === 0 && (
                  <button type="button" class="secondary" onClick={() => disable(promo.code)} aria-label={`${w('disable')}: ${promo.code}`}>
                    {w('disable')}
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
        {codes.data && <Pager offset={offset} total={codes.data.count} onChange={setOffset} />}
      </Card>
      <Card title={w('create')}>
        <Form onSubmit={create} label={w('promo')}>
          <Field label={w('code')} name="code" value={code} onInput={setCode} required />
          <Field label={w('itemProtoIds')} name="item_proto_ids" value={protos} onInput={setProtos} required />
          <Field label={w('maxUses')} name="max_uses" inputMode="numeric" value={maxUses} onInput={setMaxUses} />
          <button type="submit">{w('create')}</button>
        </Form>
      </Card>
    </>
  );
}

function AuditLog({ target, round = 0 }: { target?: string; round?: number }) {
  const { w, lang } = useWords();
  const [offset, setOffset] = useState(0);
  const [filter, setFilter] = useState({ action: '', target: '' });
  const [applied, setApplied] = useState({ action: '', target: target ?? '' });
  const log = useLoad(
    () =>
      adminCall('/api/admin.auditLog', {
        offset,
        count: PAGE,
        ...(applied.action ? { action: applied.action } : {}),
        ...(applied.target ? { target: applied.target } : {}),
      }),
    [offset, applied.action, applied.target, round],
  );
  return (
    <Card title={target ? w('auditOf') : w('audit')}>
      {!target && (
        <Form
          onSubmit={() => {
            setOffset(0);
            setApplied({ action: filter.action.trim(), target: filter.target.trim() });
          }}
          label={w('filter')}
        >
          <div class="inline">
            <Field label={w('action')} name="action" value={filter.action} onInput={(action) => setFilter({ ...filter, action })} />
            <Field
              label={w('target')}
              name="target"
              value={filter.target}
              onInput={(value) => setFilter({ ...filter, target: value })}
              maxLength={120}
            />
            <button type="submit">{w('filter')}</button>
          </div>
        </Form>
      )}
      {!log.data ? (
        <Loading error={log.error} />
      ) : log.data.entries.length === 0 ? (
        <p>{w('noRows')}</p>
      ) : (
        <ol class="plain audit">
          {log.data.entries.map((entry) => (
            <li key={entry.audit_id}>
              <span class="muted">{when(entry.ts, lang)}</span> <strong>{entry.action}</strong>
              {entry.target ? ` → ${entry.target}` : ''} · {entry.ip} · {entry.result_code} <code>{JSON.stringify(entry.params)}</code>
            </li>
          ))}
        </ol>
      )}
      {log.data && <Pager offset={offset} total={log.data.count} onChange={setOffset} />}
    </Card>
  );
}
