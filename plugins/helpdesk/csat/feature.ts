import type { HelpdeskFeature } from '../feature.ts';

export const csatFeature: HelpdeskFeature = {};
