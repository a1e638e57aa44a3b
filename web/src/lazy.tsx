import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Loading } from './ui';

type View<P> = (props: P) => JSX.Element;

/**
 * A page whose code is loaded on its first visit, not with the first page: the home screen's
 * script stays small. Later visits draw it at once.
 */
export function lazyView<P extends object>(load: () => Promise<View<P>>): View<P> {
  let loaded: View<P> | undefined;
  return function LazyView(props: P) {
    const [view, setView] = useState<{ draw: View<P> } | undefined>(loaded && { draw: loaded });
    const [error, setError] = useState<unknown>(undefined);
    useEffect(() => {
      if (!view)
        load().then(
          (draw) => setView({ draw: (loaded = draw) }),
          (failure: unknown) => setError(failure),
        );
    }, []);
    if (!view) return <Loading error={error} />;
    const Draw = view.draw;
    return <Draw {...props} />;
  };
}
