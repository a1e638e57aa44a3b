import { Store, useStore } from './store';

/** History-API routing: the server answers every client path with the same page. */
export const location = new Store({ path: window.location.pathname, query: new URLSearchParams(window.location.search) });

function update(): void {
  location.set({ path: window.location.pathname, query: new URLSearchParams(window.location.search) });
}

window.addEventListener('popstate', update);

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  update();
  window.scrollTo(0, 0);
}

export const useLocation = () => useStore(location);

/** The parameters of `pattern` (`/profile/:id`) in `path`, or undefined when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const have = path.replace(/\/+$/, '').split('/');
  if (path === '/') have.splice(0, have.length, '', '');
  if (pattern === '/') return path === '/' ? {} : undefined;
  if (want.length !== have.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i]!.startsWith(':')) params[want[i]!.slice(1)] = decodeURIComponent(have[i]!);
    else if (want[i] !== have[i]) return undefined;
  }
  return params;
}

/** Follows same-origin links without reloading the page. */
export function followLinks(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = (event.target as Element | null)?.closest?.('a');
  if (!link || link.target || link.origin !== window.location.origin || link.hasAttribute('download')) return;
  if (['/docs', '/openapi.json', '/about', '/healthz'].some((p) => link.pathname.startsWith(p))) return;
  // A link within the page (`#main`, or another game of the table page) is the browser's to follow.
  if (link.hash && link.pathname === window.location.pathname && link.search === window.location.search) return;
  event.preventDefault();
  // The fragment is kept: the table page reads its game from it (`/table/#/{gs_id}/{gs_game_id}`).
  navigate(link.pathname + link.search + link.hash);
}
