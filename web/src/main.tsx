import { render } from 'preact';
import { App } from './app';
import { startFeed } from './realtime';
import { prefetchHome } from './pages/home';
import { session } from './session';
import { followLobby } from './rooms';
import './styles.css';

followLobby();
startFeed();
// The home screen's reads leave now, while the first render is still to come.
if (window.location.pathname === '/' && session.value) prefetchHome();
render(<App />, document.getElementById('app')!);
