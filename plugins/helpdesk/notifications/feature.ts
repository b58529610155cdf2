import type { HelpdeskFeature } from '../feature.ts';

export const notificationsFeature: HelpdeskFeature = {};
