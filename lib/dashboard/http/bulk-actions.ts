import { assertUuid } from '../../core/index.js';
import { html, type SafeHtml } from '../html/html.js';
import { DashboardHttpError, type DashboardRequest } from './dashboard-request.js';

// The bulk actions' shared parts: which addresses are bulk questions, the ids a form carries, and
// what a question lists. Dead letters (and the failed jobs that block sequences) are replayed or
// cancelled in bulk, jobs cancelled.

/**
 * The most jobs one bulk action takes: a page's worth, which also keeps a form well inside the
 * 1,000 fields Express's body parser accepts.
 */
export const BULK_LIMIT = 500;

/** The ids of a bulk action, deduplicated and bounded, each a UUID: all are checked before any is acted on. */
export function bulkIds(params: URLSearchParams): string[] {
  const ids = [...new Set(params.getAll('id').map((id) => id.trim()).filter((id) => id !== ''))];
  if (ids.length === 0) throw new DashboardHttpError(400, 'Select at least one job first.');
  if (ids.length > BULK_LIMIT) throw new DashboardHttpError(400, `A bulk action takes at most ${BULK_LIMIT} jobs at once.`);
  return ids.map((id) => assertUuid(id, 'id'));
}

/** What an operator can do to many dead letters at once: replay them, or cancel (discard) them. */
export type BulkAction = 'replay' | 'cancel';

/** The bulk action an address names, or null. */
export function bulkActionOf(name: string | undefined): BulkAction | null {
  return name === 'replay' || name === 'cancel' ? name : null;
}

/** A POSTed bulk action that has not been confirmed yet: it shows the question instead of acting. */
export function isBulkQuestion(req: DashboardRequest): boolean {
  if (req.segments.length !== 2 || req.form.get('confirmed') === '1') return false;
  const [section, action] = req.segments;
  return ((section === 'dead-letters' || section === 'sequences') && bulkActionOf(action) !== null) || (section === 'jobs' && action === 'cancel');
}

/** What each dead-letter bulk question says, and its verb. */
export const BULK_COPY = {
  replay: {
    consequence: 'Each becomes due now with its attempts reset to zero. A job that has left the dead-letter list since is skipped.',
    verb: 'Replay',
  },
  cancel: {
    consequence:
      'Each ends cancelled and leaves the dead-letter list for good: it keeps its error and history, can no longer be replayed, and retention deletes it like any cancelled job. A job that has left the dead-letter list since is skipped.',
    verb: 'Cancel',
  },
} as const;

/**
 * What each question of the sequences page says: the dead-letter actions on the jobs that block
 * sequences, and what each does to the job that waits behind.
 */
export const SEQUENCE_COPY = {
  replay: {
    consequence:
      'Each becomes due now with its attempts reset to zero; the job waiting behind it in its sequence runs once it succeeds, and stays blocked if it fails for good again. A job no longer dead-lettered or quarantined is skipped.',
    verb: 'Replay',
  },
  cancel: {
    consequence:
      'Each ends cancelled, keeps its error and history, can no longer be replayed, and retention deletes it like any cancelled job. The job waiting behind it in its sequence is released at once. A job no longer dead-lettered or quarantined is skipped.',
    verb: 'Cancel',
  },
} as const;

/** A bulk question's list of what it touches: the first 20 ids, and how many more. */
export function bulkTargets(ids: readonly string[]): SafeHtml[] {
  return ids.slice(0, 20).map((jobId) => html`${jobId}`).concat(ids.length > 20 ? [html`and ${ids.length - 20} more`] : []);
}
