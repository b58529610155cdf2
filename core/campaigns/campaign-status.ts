import { DomainError } from '../shared/errors.ts';

/**
 * A campaign's life (issue 8, ours: the spec does not show it). A draft holds no credits; launching
 * reserves them for the whole audience and starts now or at the scheduled time; a running campaign
 * sends at its pace until every recipient has been handled, can be paused (by a person, or by the
 * service when its connection drops) and resumed; cancelling gives back the credits of recipients
 * never sent. A campaign whose connection is deleted fails, and gives back what is left.
 */
export const CAMPAIGN_STATUSES = ['DRAFT', 'SCHEDULED', 'RUNNING', 'PAUSED', 'COMPLETED', 'CANCELLED', 'FAILED'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export type CampaignCommand =
  /** Reserve the audience's credits and start now. */
  | 'launch_now'
  /** Reserve the audience's credits and wait for the start time. */
  | 'launch_later'
  /** The start time has come. */
  | 'start'
  | 'pause'
  | 'resume'
  /** Resumed before the start time: waits for it. */
  | 'resume_later'
  /** Every recipient handled and no send in flight. */
  | 'finish'
  | 'cancel'
  | 'fail';

/** The transition table: from, command, to. What is not listed is refused with 409. */
export const CAMPAIGN_TRANSITIONS: ReadonlyArray<{ from: CampaignStatus; command: CampaignCommand; to: CampaignStatus }> = [
  { from: 'DRAFT', command: 'launch_now', to: 'RUNNING' },
  { from: 'DRAFT', command: 'launch_later', to: 'SCHEDULED' },
  { from: 'SCHEDULED', command: 'start', to: 'RUNNING' },
  { from: 'SCHEDULED', command: 'pause', to: 'PAUSED' },
  { from: 'SCHEDULED', command: 'cancel', to: 'CANCELLED' },
  { from: 'SCHEDULED', command: 'fail', to: 'FAILED' },
  { from: 'RUNNING', command: 'pause', to: 'PAUSED' },
  { from: 'RUNNING', command: 'finish', to: 'COMPLETED' },
  { from: 'RUNNING', command: 'cancel', to: 'CANCELLED' },
  { from: 'RUNNING', command: 'fail', to: 'FAILED' },
  { from: 'PAUSED', command: 'resume', to: 'RUNNING' },
  { from: 'PAUSED', command: 'resume_later', to: 'SCHEDULED' },
  { from: 'PAUSED', command: 'cancel', to: 'CANCELLED' },
  { from: 'PAUSED', command: 'fail', to: 'FAILED' },
];

/** Statuses in which the campaign holds a credit reservation that is still open. */
export const ACTIVE_STATUSES: readonly CampaignStatus[] = ['SCHEDULED', 'RUNNING', 'PAUSED'];
export const FINAL_STATUSES: readonly CampaignStatus[] = ['COMPLETED', 'CANCELLED', 'FAILED'];

export function canApply(from: CampaignStatus, command: CampaignCommand): boolean {
  return CAMPAIGN_TRANSITIONS.some((t) => t.from === from && t.command === command);
}

/** The status after `command`, or 409 naming what the campaign is. */
export function nextCampaignStatus(from: CampaignStatus, command: CampaignCommand): CampaignStatus {
  const rule = CAMPAIGN_TRANSITIONS.find((t) => t.from === from && t.command === command);
  if (!rule) throw new DomainError('conflict', `The campaign is ${from}; it cannot ${COMMAND_WORDS[command]}`);
  return rule.to;
}

const COMMAND_WORDS: Record<CampaignCommand, string> = {
  launch_now: 'be launched',
  launch_later: 'be launched',
  start: 'start',
  pause: 'be paused',
  resume: 'be resumed',
  resume_later: 'be resumed',
  finish: 'complete',
  cancel: 'be cancelled',
  fail: 'fail',
};
