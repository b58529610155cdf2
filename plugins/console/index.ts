import type { Plugin } from '../kernel/plugin.ts';
import { consoleRoutes } from './routes.ts';

/**
 * The web console (issue 22, section 3): the service's own browser app at `/`, on by default and
 * off when `PLUGINS` leaves it out (then `/` answers 404 as any unknown path). It adds no API,
 * tables or jobs: the page calls the public `/v3` API with the sign-in session and listens on
 * the `/helpdesk` websocket, like any other client.
 */
export const consolePlugin: Plugin = {
  name: 'console',
  routes: consoleRoutes,
  homePage: '/',
};
