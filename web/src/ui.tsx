import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure } from './api/client';
import { useI18n } from './i18n';
import { profilePath, type UserLike } from './users';

let nextId = 0;
const fieldId = () => `f${++nextId}`;

export function Field(props: {
  label: string;
  name: string;
  type?: 'text' | 'email' | 'password' | 'search';
  value: string;
  onInput: (value: string) => void;
  autocomplete?: string;
  required?: boolean;
  hint?: string;
  inputMode?: 'numeric' | 'text';
  maxLength?: number;
}) {
  const [id] = useState(fieldId);
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        {...({ type: props.type ?? 'text' } as Record<string, string>)}
        id={id}
        name={props.name}
        value={props.value}
        required={props.required}
        autocomplete={props.autocomplete}
        inputMode={props.inputMode}
        maxLength={props.maxLength}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onInput={(event) => props.onInput((event.target as HTMLInputElement).value)}
      />
      {props.hint && (
        <small id={`${id}-hint`} class="hint">
          {props.hint}
        </small>
      )}
    </div>
  );
}

/** An action's outcome: an error sentence (announced to screen readers) or a notice. */
export function Outcome({ error, notice }: { error?: unknown; notice?: string }) {
  const { error: sentence } = useI18n();
  if (error !== undefined) {
    const text = error instanceof ApiFailure ? sentence(error.code, error.description, error.data) : sentence(3);
    return (
      <p class="error" role="alert">
        {text}
      </p>
    );
  }
  if (notice)
    return (
      <p class="notice" role="status">
        {notice}
      </p>
    );
  return null;
}

/** Runs an action, keeping whether it is under way and how it ended. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const run = async (action: () => Promise<string | void>) => {
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    try {
      const message = await action();
      if (message) setNotice(message);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, notice, run, setError };
}

export function Form(props: { onSubmit: () => void; children: ComponentChildren; label?: string }) {
  return (
    <form
      aria-label={props.label}
      onSubmit={(event) => {
        event.preventDefault();
        props.onSubmit();
      }}
    >
      {props.children}
    </form>
  );
}

export function Avatar({ src, nick, size = 48 }: { src?: string; nick: string; size?: number }) {
  const [broken, setBroken] = useState(false);
  if (!src || broken)
    return (
      <span class="avatar placeholder" aria-hidden="true" data-size={size}>
        {nick.slice(0, 1).toUpperCase()}
      </span>
    );
  return <img class="avatar" src={src} alt="" width={size} height={size} onError={() => setBroken(true)} />;
}

export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  document.title = title;
  return (
    <section class="page" aria-labelledby="page-title">
      <h1 id="page-title">{title}</h1>
      {children}
    </section>
  );
}

/** Loads what a page shows; `reload` loads it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setError(undefined);
    load().then(
      (value) => current && setData(value),
      (failure: unknown) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  return { data, error, reload: () => setRound((n) => n + 1), setData };
}

export function Loading({ error }: { error?: unknown }) {
  const { t } = useI18n();
  return error === undefined ? <p role="status">{t('loading')}</p> : <Outcome error={error} />;
}

/** A player in a list: avatar and nick linking to the profile, then what the list offers. */
export function UserRow({
  user,
  href,
  children,
}: {
  user: Omit<UserLike, 'user_id'> & { user_id?: number };
  href?: string;
  children?: ComponentChildren;
}) {
  return (
    <li class="user-row">
      <Avatar src={user.avatar} nick={user.nick} size={32} />
      <a href={href ?? profilePath({ user_id: user.user_id ?? 0, domain: user.domain })}>{user.nick}</a>
      {children}
    </li>
  );
}
