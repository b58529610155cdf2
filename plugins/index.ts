import type { Plugin } from './kernel/plugin.ts';
import { helpdeskPlugin } from './helpdesk/index.ts';
import { campaignsPlugin } from './campaigns/index.ts';
import { carouselsPlugin } from './carousels/index.ts';
import { flowsPlugin } from './flows/index.ts';
import { v2Plugin } from './v2/index.ts';
import { consolePlugin } from './console/index.ts';

/** Every plugin this build ships. */
export const AVAILABLE_PLUGINS: Plugin[] = [campaignsPlugin, helpdeskPlugin, carouselsPlugin, flowsPlugin, v2Plugin, consolePlugin];
