import { render } from 'preact';
import { App } from './app';
import { loadCharts } from './charts/chart';
import './styles.css';

render(<App />, document.getElementById('app')!);
// The chart library is a chunk of its own: fetch it now, beside the page's first requests.
void loadCharts();
