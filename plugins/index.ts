import type { Plugin } from './plugin.ts';
import { helpdeskPlugin } from './helpdesk/index.ts';
import { campaignsPlugin } from './campaigns/index.ts';
import { carouselsPlugin } from './carousels/index.ts';
import { flowsPlugin } from './flows/index.ts';

/**
 * Every plugin this build ships. A plugin folder joins this list once it has content
 * (flows, carousels and v2 arrive with their issues).
 */
export const AVAILABLE_PLUGINS: Plugin[] = [campaignsPlugin, helpdeskPlugin, carouselsPlugin, flowsPlugin];
