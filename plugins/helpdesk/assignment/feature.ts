import type { HelpdeskFeature } from '../feature.ts';

export const assignmentFeature: HelpdeskFeature = {};
