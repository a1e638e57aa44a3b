import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { useI18n } from '../i18n';
import { Field, Form, Outcome, Page, useAction } from '../ui';

export function Promo() {
  const { t } = useI18n();
  const [code, setCode] = useState('');
  const action = useAction();
  const activate = () =>
    action.run(async () => {
      const { data } = await ok(api.POST('/api/wallet.promocodeActivate', { body: { promocode: code.trim() } }));
      setCode('');
      return t('received', { titles: data.items.map((item) => item.title).join(', ') || t('nothing') });
    });
  return (
    <Page title={t('promo')}>
      <Form onSubmit={activate} label={t('promo')}>
        <Field label={t('promoCode')} name="promocode" required value={code} onInput={setCode} />
        <button type="submit" disabled={action.busy}>
          {t('activate')}
        </button>
      </Form>
      <Outcome error={action.error} notice={action.notice} />
    </Page>
  );
}
