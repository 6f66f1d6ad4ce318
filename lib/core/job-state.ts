/**
 * The states a job moves through. `scheduled` and `awaiting_parents` wait, `running` holds a lease,
 * and the other four are terminal: only an operator moves a `dead_lettered` or `quarantined`
 * job again, by replaying it or by cancelling (discarding) it.
 */
export const JOB_STATES = [
  'scheduled',
  'awaiting_parents',
  'running',
  'succeeded',
  'dead_lettered',
  'cancelled',
  'quarantined',
] as const;

/** One of {@link JOB_STATES}. */
export type JobState = (typeof JOB_STATES)[number];

const TERMINAL: ReadonlySet<JobState> = new Set<JobState>([
  'succeeded',
  'dead_lettered',
  'cancelled',
  'quarantined',
]);

/** True for the four states no worker ever leaves. */
export function isTerminalState(state: JobState): boolean {
  return TERMINAL.has(state);
}

/**
 * The two states a job ends in without succeeding, waiting for an operator, who replays it or
 * discards it (a cancel): the dead-letter list. A cancel that passes these as `onlyFrom` discards
 * only a job still in one of them.
 */
export const DEAD_LETTER_STATES: readonly JobState[] = ['dead_lettered', 'quarantined'];

/** True for a job in the dead-letter list ({@link DEAD_LETTER_STATES}). */
export function isDeadLetterState(state: JobState): boolean {
  return state === 'dead_lettered' || state === 'quarantined';
}

/** True when `value` names a job state. */
export function isJobState(value: unknown): value is JobState {
  return typeof value === 'string' && (JOB_STATES as readonly string[]).includes(value);
}
