import type { HelpdeskFeature } from '../feature.ts';

export const reportsFeature: HelpdeskFeature = {};
