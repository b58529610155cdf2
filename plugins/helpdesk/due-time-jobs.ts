/**
 * How the helpdesk runs a job due at a moment (a snooze's end, an SLA round's deadline): a job
 * that comes early (clocks a little apart) fails with its "not due" error and runs again a second
 * later; a database outage is ridden out over about half an hour of backoff; due jobs are looked
 * for every second.
 */
export const DUE_TIME_JOB = {
  retryLimit: 10,
  retryDelay: 1,
  retryBackoff: true,
  expireInSeconds: 30,
  concurrency: 2,
  batchSize: 10,
  dueJobPollSeconds: 1,
} as const;
