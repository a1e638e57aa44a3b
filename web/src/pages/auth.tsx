import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { useI18n } from '../i18n';
import { navigate, useLocation } from '../router';
import { sessionFrom, setSession } from '../session';
import { Field, Form, Outcome, Page, useAction } from '../ui';

function begin(data: Parameters<typeof sessionFrom>[0]): void {
  setSession(sessionFrom(data));
  const next = new URLSearchParams(window.location.search).get('next');
  navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/', true);
}

export function SignIn() {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [pending, setPending] = useState<string | undefined>(undefined);
  const action = useAction();

  const signIn = () =>
    action.run(async () => {
      const { data } = await ok(api.POST('/api/auth.signin', { body: { email, password } }));
      if ('totp_session_token' in data) setPending(data.totp_session_token);
      else begin(data);
    });
  const verify = () =>
    action.run(async () => {
      const { data } = await ok(api.POST('/api/auth.totpVerify', { body: { totp_session_token: pending!, code: code.trim() } }));
      begin(data);
    });

  return (
    <Page title={t('signIn')}>
      {pending === undefined ? (
        <Form onSubmit={signIn} label={t('signIn')}>
          <Field label={t('email')} name="email" type="email" autocomplete="username" required value={email} onInput={setEmail} />
          <Field
            label={t('password')}
            name="password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={setPassword}
          />
          <button type="submit" disabled={action.busy}>
            {t('signIn')}
          </button>
        </Form>
      ) : (
        <Form onSubmit={verify} label={t('verify')}>
          <Field
            label={t('code')}
            name="code"
            autocomplete="one-time-code"
            hint={t('recoveryHint')}
            required
            value={code}
            onInput={setCode}
          />
          <button type="submit" disabled={action.busy}>
            {t('verify')}
          </button>
        </Form>
      )}
      <Outcome error={action.error} />
      <p>
        <a href="/reset-password">{t('forgot')}</a>
      </p>
      <p>
        {t('noAccount')} <a href="/signup">{t('signUp')}</a>
      </p>
    </Page>
  );
}

export function SignUp() {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [nick, setNick] = useState('');
  const [domain, setDomain] = useState('');
  const action = useAction();
  const signUp = () =>
    action.run(async () => {
      const { data } = await ok(api.POST('/api/auth.signup', { body: { email, password, nick, ...(domain ? { domain } : {}) } }));
      setSession(sessionFrom(data));
      navigate('/?welcome=1', true);
    });
  return (
    <Page title={t('signUp')}>
      <Form onSubmit={signUp} label={t('signUp')}>
        <Field label={t('email')} name="email" type="email" autocomplete="email" required value={email} onInput={setEmail} />
        <Field label={t('nick')} name="nick" autocomplete="nickname" required value={nick} onInput={setNick} />
        <Field
          label={t('password')}
          name="password"
          type="password"
          autocomplete="new-password"
          required
          value={password}
          onInput={setPassword}
        />
        <Field label={t('domain')} name="domain" value={domain} onInput={setDomain} />
        <button type="submit" disabled={action.busy}>
          {t('signUp')}
        </button>
      </Form>
      <Outcome error={action.error} />
      <p>
        {t('haveAccount')} <a href="/signin">{t('signIn')}</a>
      </p>
    </Page>
  );
}

/** Asks for the reset link; opened from the link (`?token=`), sets the new password. */
export function ResetPassword() {
  const { t } = useI18n();
  const token = useLocation().query.get('token');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const action = useAction();
  if (!token)
    return (
      <Page title={t('resetTitle')}>
        <Form
          label={t('resetTitle')}
          onSubmit={() =>
            action.run(async () => {
              await ok(api.POST('/api/auth.requestPasswordReset', { body: { email } }));
              return t('resetSent');
            })
          }
        >
          <Field label={t('email')} name="email" type="email" autocomplete="email" required value={email} onInput={setEmail} />
          <button type="submit" disabled={action.busy}>
            {t('resetSend')}
          </button>
        </Form>
        <Outcome error={action.error} notice={action.notice} />
      </Page>
    );
  return (
    <Page title={t('resetTitle')}>
      <Form
        label={t('resetSet')}
        onSubmit={() =>
          action.run(async () => {
            await ok(api.POST('/api/auth.resetPassword', { body: { token, password, ...(code ? { code: code.trim() } : {}) } }));
            return t('resetDone');
          })
        }
      >
        <Field
          label={t('newPassword')}
          name="password"
          type="password"
          autocomplete="new-password"
          required
          value={password}
          onInput={setPassword}
        />
        <Field label={t('code')} name="code" autocomplete="one-time-code" hint={t('recoveryHint')} value={code} onInput={setCode} />
        <button type="submit" disabled={action.busy}>
          {t('resetSet')}
        </button>
      </Form>
      <Outcome error={action.error} notice={action.notice} />
      {action.notice && (
        <p>
          <a href="/signin">{t('signIn')}</a>
        </p>
      )}
    </Page>
  );
}

/** Opened from the confirmation e-mail: confirms the address with the link's token. */
export function ConfirmEmail() {
  const { t } = useI18n();
  const token = useLocation().query.get('token') ?? '';
  const action = useAction();
  const [done, setDone] = useState(false);
  useEffect(() => {
    void action.run(async () => {
      await ok(api.POST('/api/account.verifyEmail', { body: { token } }));
      setDone(true);
    });
  }, [token]);
  return (
    <Page title={t('confirmTitle')}>
      {action.busy && <p role="status">{t('confirming')}</p>}
      <Outcome error={action.error} notice={done ? t('confirmed') : undefined} />
      {done && (
        <p>
          <a href="/">{t('continue')}</a>
        </p>
      )}
    </Page>
  );
}
