import type { HelpdeskFeature } from '../feature.ts';

export const slaFeature: HelpdeskFeature = {};
