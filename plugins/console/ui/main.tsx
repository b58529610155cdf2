import { render } from 'preact';
import './styles.css';
import { App } from './shell.tsx';

render(<App />, document.getElementById('console')!);
