import { DomainError } from '../shared/errors.ts';
import { accepts, nextState, type TransitionTable } from '../shared/transition-table.ts';

/**
 * A campaign's life (issue 8, ours: the spec does not show it). A draft holds no credits; launching
 * reserves them for the whole audience and starts now or at the scheduled time; a running campaign
 * sends at its pace until every recipient has been handled, can be paused (by a person, or by the
 * service when its connection drops) and resumed; cancelling gives back the credits of recipients
 * never sent. A campaign whose connection is deleted fails, and gives back what is left.
 */
export const CAMPAIGN_STATUSES = ['DRAFT', 'SCHEDULED', 'RUNNING', 'PAUSED', 'COMPLETED', 'CANCELLED', 'FAILED'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/**
 * What moves a campaign:
 *
 * launch_now     reserve the audience's credits and start now
 * launch_later   reserve the audience's credits and wait for the start time
 * start          the start time has come
 * pause, resume
 * resume_later   resumed before the start time: waits for it
 * finish         every recipient handled and no send in flight
 * cancel, fail
 */
export const CAMPAIGN_COMMANDS = ['launch_now', 'launch_later', 'start', 'pause', 'resume', 'resume_later', 'finish', 'cancel', 'fail'] as const;
export type CampaignCommand = (typeof CAMPAIGN_COMMANDS)[number];

/** The transition table: for each status, the commands it accepts and where they lead. What is not listed is refused with 409. */
export const CAMPAIGN_TRANSITIONS: TransitionTable<CampaignStatus, CampaignCommand> = {
  DRAFT: { launch_now: 'RUNNING', launch_later: 'SCHEDULED' },
  SCHEDULED: { start: 'RUNNING', pause: 'PAUSED', cancel: 'CANCELLED', fail: 'FAILED' },
  RUNNING: { pause: 'PAUSED', finish: 'COMPLETED', cancel: 'CANCELLED', fail: 'FAILED' },
  PAUSED: { resume: 'RUNNING', resume_later: 'SCHEDULED', cancel: 'CANCELLED', fail: 'FAILED' },
  COMPLETED: {},
  CANCELLED: {},
  FAILED: {},
};

/** Statuses in which the campaign holds a credit reservation that is still open. */
export const ACTIVE_STATUSES: readonly CampaignStatus[] = ['SCHEDULED', 'RUNNING', 'PAUSED'];
export const FINAL_STATUSES: readonly CampaignStatus[] = ['COMPLETED', 'CANCELLED', 'FAILED'];

export function canApply(from: CampaignStatus, command: CampaignCommand): boolean {
  return accepts(CAMPAIGN_TRANSITIONS, from, command);
}

/** The status after `command`, or 409 naming what the campaign is. */
export function nextCampaignStatus(from: CampaignStatus, command: CampaignCommand): CampaignStatus {
  const to = nextState(CAMPAIGN_TRANSITIONS, from, command);
  if (!to) throw new DomainError('conflict', `The campaign is ${from}; it cannot ${COMMAND_WORDS[command]}`);
  return to;
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
