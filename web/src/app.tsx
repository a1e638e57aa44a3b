import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { language, setLanguage, useI18n, type Key, type Language } from './i18n';
import { ConfirmEmail, ResetPassword, SignIn, SignUp } from './pages/auth';
import { Home } from './pages/home';
import { lazyView } from './lazy';
import { money, readBalance } from './wallet';
import { followLinks, match, navigate, useLocation } from './router';
import { session, signOut } from './session';
import { useStore } from './store';
import { Loading, Page } from './ui';
import { balance, counters } from './realtime';
import { invitationCount } from './rooms';

// Every page but the home screen and signing in is loaded on its first visit.
const Friends = lazyView(() => import('./pages/friends').then((m) => m.Friends));
const Inventory = lazyView(() => import('./pages/inventory').then((m) => m.Inventory));
const Market = lazyView(() => import('./pages/market').then((m) => m.Market));
const MyListings = lazyView(() => import('./pages/market').then((m) => m.MyListings));
const WalletHistory = lazyView(() => import('./pages/market').then((m) => m.WalletHistory));
const Shop = lazyView(() => import('./pages/market').then((m) => m.Shop));
const Dialogs = lazyView(() => import('./pages/messages').then((m) => m.Dialogs));
const Conversation = lazyView(() => import('./pages/messages').then((m) => m.Conversation));
const Profile = lazyView(() => import('./pages/profile').then((m) => m.Profile));
const Promo = lazyView(() => import('./pages/promo').then((m) => m.Promo));
const Settings = lazyView(() => import('./pages/settings').then((m) => m.Settings));
const Trades = lazyView(() => import('./pages/trades').then((m) => m.Trades));
const NewTrade = lazyView(() => import('./pages/trades').then((m) => m.NewTrade));
const LobbyPage = lazyView(() => import('./pages/lobby').then((m) => m.LobbyPage));
const LiveGames = lazyView(() => import('./pages/m1tv').then((m) => m.LiveGames));

interface Route {
  path: string;
  /** Open without an account (sign-in, sign-up, the pages e-mail links open). */
  open?: boolean;
  view: (params: Record<string, string>) => JSX.Element;
}

/**
 * The client's pages at the reference's paths. The game table (`/table/#/...`) is linked to
 * through table-links.ts.
 */
const ROUTES: Route[] = [
  { path: '/signin', open: true, view: () => <SignIn /> },
  { path: '/signup', open: true, view: () => <SignUp /> },
  { path: '/reset-password', open: true, view: () => <ResetPassword /> },
  { path: '/confirm-email', open: true, view: () => <ConfirmEmail /> },
  { path: '/', view: () => <Home /> },
  { path: '/profile/:id', open: true, view: ({ id }) => <Profile who={id!} /> },
  { path: '/p/:domain', open: true, view: ({ domain }) => <Profile who={domain!} /> },
  { path: '/inventory', view: () => <Inventory /> },
  { path: '/trades', view: () => <Trades tab="incoming" /> },
  { path: '/trades/outgoing', view: () => <Trades tab="outgoing" /> },
  { path: '/trades/history', view: () => <Trades tab="history" /> },
  { path: '/trades/new', view: () => <NewTrade /> },
  { path: '/friends', view: () => <Friends /> },
  { path: '/settings', view: () => <Settings /> },
  { path: '/promo', view: () => <Promo /> },
  { path: '/messages', view: () => <Dialogs /> },
  { path: '/messages/:id', view: ({ id }) => <Conversation partnerId={Number(id)} /> },
  { path: '/market', view: () => <Market /> },
  { path: '/market/my', view: () => <MyListings /> },
  { path: '/market/history', view: () => <WalletHistory /> },
  { path: '/shop', view: () => <Shop /> },
  { path: '/admin', open: true, view: () => <AdminConsole /> },
  { path: '/admin/:section', open: true, view: (params) => <AdminConsole {...params} /> },
  { path: '/admin/:section/:id', open: true, view: (params) => <AdminConsole {...params} /> },
  { path: '/table', open: true, view: () => <GameTable /> },
  { path: '/lobby', view: () => <LobbyPage /> },
  { path: '/m1tv', open: true, view: () => <LiveGames /> },
];

type TableModule = typeof import('./pages/table');
let tableModule: TableModule | undefined;

/** The game table (`/table/#/{gs_id}/{gs_game_id}`, `/table/#/replay/{game_id}`), loaded on its first visit only. */
function GameTable() {
  const [loaded, setLoaded] = useState(tableModule);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    if (!loaded)
      import('./pages/table').then(
        (module) => setLoaded((tableModule = module)),
        (failure: unknown) => setError(failure),
      );
  }, []);
  if (!loaded) return <Loading error={error} />;
  const Table = loaded.default;
  return <Table />;
}

type ConsoleModule = typeof import('./admin/console');
let consoleModule: ConsoleModule | undefined;

/** The operator console, loaded on its first visit only: players never download it. */
function AdminConsole(props: { section?: string; id?: string }) {
  const [loaded, setLoaded] = useState(consoleModule);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    if (!loaded)
      import('./admin/console').then(
        (module) => setLoaded((consoleModule = module)),
        (failure: unknown) => setError(failure),
      );
  }, []);
  if (!loaded) return <Loading error={error} />;
  const Console = loaded.default;
  return <Console {...props} />;
}

const NAV: [string, Key][] = [
  ['/', 'home'],
  ['/lobby', 'lobby'],
  ['/m1tv', 'liveGames'],
  ['/inventory', 'inventory'],
  ['/messages', 'messages'],
  ['/trades', 'trades'],
  ['/market', 'market'],
  ['/table/', 'table'],
  ['/friends', 'friends'],
  ['/promo', 'promo'],
  ['/settings', 'settings'],
];

function NotFound() {
  const { t } = useI18n();
  return (
    <Page title={t('appName')}>
      <p>{t('notFound')}</p>
    </Page>
  );
}

function Header() {
  const { t, lang } = useI18n();
  const me = useStore(session);
  const { path } = useLocation();
  const unread = useStore(counters).messages_new ?? 0;
  const invitations = useStore(invitationCount);
  return (
    <header class="top">
      <a href="#main" class="skip">
        {t('skip')}
      </a>
      <a href="/" class="brand">
        {t('appName')}
      </a>
      {me && (
        <nav aria-label={t('nav')}>
          <ul>
            {NAV.map(([href, key]) => (
              <li key={href}>
                <a href={href} aria-current={(href === '/' ? path === '/' : path.startsWith(href)) ? 'page' : undefined}>
                  {key === 'messages' && unread
                    ? t('messagesCount', { n: unread })
                    : key === 'lobby' && invitations
                      ? t('lobbyCount', { n: invitations })
                      : t(key)}
                </a>
              </li>
            ))}
            <li>
              <a href={`/profile/${me.user_id}`}>{t('profile')}</a>
            </li>
          </ul>
        </nav>
      )}
      <div class="tools">
        {me && <Balance />}
        <label for="language" class="visually-hidden">
          {t('language')}
        </label>
        <select id="language" value={lang} onChange={(e) => setLanguage((e.target as HTMLSelectElement).value as Language)}>
          <option value="en" lang="en">
            English
          </option>
          <option value="ru" lang="ru">
            Русский
          </option>
        </select>
        {me ? (
          <button type="button" class="secondary" onClick={() => void signOut().then(() => navigate('/signin'))}>
            {t('signOut')}
          </button>
        ) : (
          <a href="/signin">{t('signIn')}</a>
        )}
      </div>
    </header>
  );
}

/** The wallet's balance, read once and kept current by the feed's `wallet.balance` events. */
function Balance() {
  const { t, lang } = useI18n();
  const amount = useStore(balance);
  useEffect(() => {
    void readBalance().catch(() => undefined);
  }, []);
  if (amount === undefined) return null;
  return (
    <a href="/market/history" class="balance" aria-live="polite">
      {t('balanceIs', { amount: money(lang, amount) })}
    </a>
  );
}

function Shell({ children }: { children: ComponentChildren }) {
  return (
    <div onClick={followLinks}>
      <Header />
      <main id="main" tabIndex={-1}>
        {children}
      </main>
      <footer class="muted">
        <a href="/about">game-platform</a> · <a href="/docs">API</a>
      </footer>
    </div>
  );
}

export function App() {
  const { path } = useLocation();
  const me = useStore(session);
  useStore(language);
  const found = ROUTES.map((route) => ({ route, params: match(route.path, path) })).find((entry) => entry.params);
  const needsSignIn = found && !found.route.open && !me;
  useEffect(() => {
    if (needsSignIn) navigate(`/signin?next=${encodeURIComponent(path + window.location.search)}`, true);
  }, [needsSignIn, path]);
  if (!found) return <Shell>{<NotFound />}</Shell>;
  if (needsSignIn) return <Shell>{null}</Shell>;
  return <Shell>{found.route.view(found.params!)}</Shell>;
}
