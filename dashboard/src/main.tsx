import { render } from 'preact';
import { App } from './app';
import { loadCharts } from './charts/chart';
import { session } from './session';
import './styles.css';

render(<App />, document.getElementById('app')!);
// The chart library is a chunk of its own: a logged-in viewer's first page has charts, so fetch it now, beside
// the page's first requests; the login page has none and does without it.
if (session.get()) void loadCharts();
