import type { HelpdeskFeature } from './feature.ts';
import { agentBotsFeature } from './bots/feature.ts';
import { assignmentFeature } from './assignment/feature.ts';
import { slaFeature } from './sla/feature.ts';
import { csatFeature } from './csat/feature.ts';
import { notificationsFeature } from './notifications/feature.ts';
import { reportsFeature } from './reports/feature.ts';

/** Issue 7: what turns the shared inbox into a helpdesk a team can run. */
export const AUTOMATION_FEATURES: HelpdeskFeature[] = [agentBotsFeature, assignmentFeature, slaFeature, csatFeature, notificationsFeature, reportsFeature];
