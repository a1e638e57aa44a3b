import { render } from 'preact';
import { App } from './app';
import { startFeed } from './realtime';
import { followLobby } from './rooms';
import './styles.css';

followLobby();
startFeed();
render(<App />, document.getElementById('app')!);
