import qrcode from 'qrcode-generator';
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { useI18n } from '../i18n';
import { session, sessionFrom, setSession } from '../session';
import { Field, Form, Loading, Outcome, Page, UserRow, useAction, useLoad } from '../ui';

export function Settings() {
  const { t } = useI18n();
  const account = useLoad(async () => (await ok(api.POST('/api/account.info'))).data, []);
  return (
    <Page title={t('settings')}>
      {!account.data ? (
        <Loading error={account.error} />
      ) : (
        <>
          {!account.data.email_verified && <p class="notice">{t('emailUnverified')}</p>}
          <Privacy />
          <Email current={account.data.email ?? ''} />
          <Password />
          <TwoFactor on={Boolean(account.data.hasTotp)} onChange={account.reload} />
          <Sessions />
          <Blacklist />
        </>
      )}
    </Page>
  );
}

function Privacy() {
  const { t } = useI18n();
  const privacy = useLoad(async () => (await ok(api.POST('/api/account.getPrivacy'))).data, []);
  const action = useAction();
  if (!privacy.data) return <Loading error={privacy.error} />;
  const value = privacy.data;
  const save = () =>
    action.run(async () => {
      await ok(api.POST('/api/account.setPrivacy', { body: { inventory: value.inventory, trades_income: value.trades_income } }));
      return t('saved');
    });
  return (
    <section class="card" aria-labelledby="privacy-title">
      <h2 id="privacy-title">{t('privacy')}</h2>
      <Form onSubmit={save} label={t('privacy')}>
        <div class="field">
          <label for="privacy-inventory">{t('inventoryVisible')}</label>
          <select
            id="privacy-inventory"
            value={value.inventory}
            onChange={(e) => privacy.setData({ ...value, inventory: (e.target as HTMLSelectElement).value as typeof value.inventory })}
          >
            <option value="everyone">{t('everyone')}</option>
            <option value="friends">{t('friendsOnly')}</option>
            <option value="nobody">{t('nobody')}</option>
          </select>
        </div>
        <div class="field check">
          <input
            id="privacy-trades"
            type="checkbox"
            checked={value.trades_income === 1}
            onChange={(e) => privacy.setData({ ...value, trades_income: (e.target as HTMLInputElement).checked ? 1 : 0 })}
          />
          <label for="privacy-trades">{t('tradesIncome')}</label>
        </div>
        <button type="submit" disabled={action.busy}>
          {t('save')}
        </button>
      </Form>
      <Outcome error={action.error} notice={action.notice} />
    </section>
  );
}

function Email({ current }: { current: string }) {
  const { t } = useI18n();
  const [email, setEmail] = useState(current);
  const [password, setPassword] = useState('');
  const action = useAction();
  return (
    <section class="card" aria-labelledby="email-title">
      <h2 id="email-title">{t('changeEmail')}</h2>
      <Form
        label={t('changeEmail')}
        onSubmit={() =>
          action.run(async () => {
            await ok(api.POST('/api/account.updateEmail', { body: { email, password } }));
            setPassword('');
            return t('saved');
          })
        }
      >
        <Field label={t('email')} name="email" type="email" autocomplete="email" required value={email} onInput={setEmail} />
        <Field
          label={t('currentPassword')}
          name="password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={setPassword}
        />
        <button type="submit" disabled={action.busy}>
          {t('save')}
        </button>
      </Form>
      <Outcome error={action.error} notice={action.notice} />
    </section>
  );
}

function Password() {
  const { t } = useI18n();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const action = useAction();
  return (
    <section class="card" aria-labelledby="password-title">
      <h2 id="password-title">{t('changePassword')}</h2>
      <Form
        label={t('changePassword')}
        onSubmit={() =>
          action.run(async () => {
            const { data } = await ok(api.POST('/api/account.updatePassword', { body: { password_current: current, password_new: next } }));
            setSession(sessionFrom(data, session.value));
            setCurrent('');
            setNext('');
            return t('saved');
          })
        }
      >
        <Field
          label={t('currentPassword')}
          name="password_current"
          type="password"
          autocomplete="current-password"
          required
          value={current}
          onInput={setCurrent}
        />
        <Field
          label={t('newPassword')}
          name="password_new"
          type="password"
          autocomplete="new-password"
          required
          value={next}
          onInput={setNext}
        />
        <button type="submit" disabled={action.busy}>
          {t('save')}
        </button>
      </Form>
      <Outcome error={action.error} notice={action.notice} />
    </section>
  );
}

function qrDataUrl(text: string): string {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  return qr.createDataURL(4, 8);
}

function TwoFactor({ on, onChange }: { on: boolean; onChange: () => void }) {
  const { t, lang } = useI18n();
  const [setup, setSetup] = useState<{ secret: string; otpauth_uri: string } | undefined>(undefined);
  const [codes, setCodes] = useState<string[] | undefined>(undefined);
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  return (
    <section class="card" aria-labelledby="totp-title">
      <h2 id="totp-title">{t('twoFactor')}</h2>
      {codes && (
        <div class="notice" role="status">
          <p>{t('recoveryCodes')}</p>
          <ul class="codes">
            {codes.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
      {on ? (
        <>
          <p>{t('twoFactorOn')}</p>
          <Form
            label={t('twoFactorDisable')}
            onSubmit={() =>
              action.run(async () => {
                await ok(api.POST('/api/account.totpDisable', { body: { password, code: code.trim() } }));
                setCode('');
                setPassword('');
                setCodes(undefined);
                onChange();
              })
            }
          >
            <Field
              label={t('currentPassword')}
              name="password"
              type="password"
              autocomplete="current-password"
              required
              value={password}
              onInput={setPassword}
            />
            <Field label={t('code')} name="code" autocomplete="one-time-code" required value={code} onInput={setCode} />
            <button type="submit" class="secondary" disabled={action.busy}>
              {t('twoFactorDisable')}
            </button>
          </Form>
        </>
      ) : setup ? (
        <>
          <p>{t('twoFactorScan')}</p>
          <img
            class="qr"
            src={qrDataUrl(setup.otpauth_uri)}
            alt={lang === 'ru' ? 'QR-код для приложения-аутентификатора' : 'QR code for the authenticator app'}
          />
          <p>
            {t('secret')}: <code class="secret">{setup.secret}</code>
          </p>
          <Form
            label={t('twoFactorEnable')}
            onSubmit={() =>
              action.run(async () => {
                const { data } = await ok(api.POST('/api/account.totpEnable', { body: { code: code.trim() } }));
                setCodes(data.recovery_codes);
                setSetup(undefined);
                setCode('');
                onChange();
              })
            }
          >
            <Field label={t('code')} name="code" autocomplete="one-time-code" inputMode="numeric" required value={code} onInput={setCode} />
            <button type="submit" disabled={action.busy}>
              {t('twoFactorEnable')}
            </button>
          </Form>
        </>
      ) : (
        <button
          type="button"
          onClick={() => action.run(async () => setSetup((await ok(api.POST('/api/account.totpSetup'))).data))}
          disabled={action.busy}
        >
          {t('twoFactorSetup')}
        </button>
      )}
      <Outcome error={action.error} />
    </section>
  );
}

function Sessions() {
  const { t } = useI18n();
  const sessions = useLoad(async () => (await ok(api.POST('/api/account.sessionsGet'))).data.sessions, []);
  const action = useAction();
  const revoke = (body: { session_id: number } | { all_others: 1 }) =>
    action.run(async () => {
      await ok(api.POST('/api/account.sessionsRevoke', { body }));
      sessions.reload();
    });
  return (
    <section class="card" aria-labelledby="sessions-title">
      <h2 id="sessions-title">{t('sessions')}</h2>
      {!sessions.data ? (
        <Loading error={sessions.error} />
      ) : (
        <ul class="plain">
          {sessions.data.map((s) => (
            <li key={s.session_id} class="user-row">
              <span>
                {s.user_agent || '—'} · {s.ip} · {new Date(s.last_used * 1000).toLocaleString()}
                {s.current ? ` (${t('thisSession')})` : ''}
              </span>
              {!s.current && (
                <button type="button" class="secondary" onClick={() => revoke({ session_id: s.session_id })} disabled={action.busy}>
                  {t('endSession')}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <button type="button" class="secondary" onClick={() => revoke({ all_others: 1 })} disabled={action.busy}>
        {t('revokeOthers')}
      </button>
      <Outcome error={action.error} />
    </section>
  );
}

function Blacklist() {
  const { t } = useI18n();
  const blocked = useLoad(async () => (await ok(api.POST('/api/blacklist.get', { body: { type: 'short' } }))).data.users, []);
  const action = useAction();
  return (
    <section class="card" aria-labelledby="blacklist-title">
      <h2 id="blacklist-title">{t('blacklist')}</h2>
      {!blocked.data ? (
        <Loading error={blocked.error} />
      ) : blocked.data.length === 0 ? (
        <p>{t('nobodyBlocked')}</p>
      ) : (
        <ul class="plain">
          {blocked.data.map((user) => (
            <UserRow key={user.user_id} user={user}>
              <button
                type="button"
                class="secondary"
                onClick={() =>
                  action.run(async () => {
                    await ok(api.POST('/api/blacklist.remove', { body: { user_id: user.user_id } }));
                    blocked.reload();
                  })
                }
              >
                {t('unblock')}
              </button>
            </UserRow>
          ))}
        </ul>
      )}
      <Outcome error={action.error} />
    </section>
  );
}
