import { render } from 'preact';
import { App } from './app';
import { startFeed } from './realtime';
import './styles.css';

startFeed();
render(<App />, document.getElementById('app')!);
