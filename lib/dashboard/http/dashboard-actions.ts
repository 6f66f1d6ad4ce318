import { IllegalTransitionError, JobNotFoundError, ScheduleNotFoundError, type JobState } from '../../core/index.js';
import { href } from '../html/html.js';
import { bulkActionOf, bulkIds } from './bulk-actions.js';
import { isScheduleAction } from './dashboard-pages.js';
import type { DashboardRequest } from './dashboard-request.js';
import type { DashboardStore } from './dashboard-store.js';

/** Where an action sends the browser afterwards (303), with the key of its notice. */
export interface ActionResult {
  readonly location: string;
}

/** What a bulk cancel on the dead-letter page may discard: a job replayed since the page was drawn is left alone. */
const DEAD_LETTER_STATES = ['dead_lettered', 'quarantined'] as const;

/**
 * What a confirmed cancel may act on, by what its question said: a job that moved since (a dead
 * letter replayed, a waiting job dead-lettered) is refused, not cancelled. `cancelled` is in both,
 * so confirming twice is the no-op it always was. A POST without the field cancels as the store does.
 */
const CANCELLING: Readonly<Record<string, readonly JobState[] | undefined>> & { readonly work: readonly JobState[] } = {
  dead_letter: ['dead_lettered', 'quarantined', 'cancelled'],
  work: ['scheduled', 'awaiting_parents', 'running', 'cancelled'],
};

function withNotice(location: string, notice: string): string {
  return `${location}${location.includes('?') ? '&' : '?'}notice=${encodeURIComponent(notice)}`;
}

/**
 * Performs the action a POST names, as `actor`, and says where to go next; null when no action
 * lives at that address. Every action goes through the store's operator calls, so each is
 * audited and, where it changes a job, recorded in that job's history.
 */
export async function performAction(store: DashboardStore, req: DashboardRequest): Promise<ActionResult | null> {
  const { actor, base } = req;
  const [section, id, action, ...extra] = req.segments;
  if (extra.length > 0 || id === undefined) return null;
  switch (section) {
    case 'jobs': {
      if (id === 'cancel' && action === undefined) {
        let skipped = 0;
        for (const jobId of bulkIds(req.form)) {
          try {
            await store.jobCancel({ jobId, actor, onlyFrom: CANCELLING.work });
          } catch (error) {
            // It finished, or was purged, since the page was drawn.
            if (!(error instanceof JobNotFoundError) && !(error instanceof IllegalTransitionError)) throw error;
            skipped += 1;
          }
        }
        return { location: withNotice(href(base, ['jobs']), skipped ? 'jobs.cancel_partial' : 'jobs.cancelled') };
      }
      const back = href(base, ['jobs', id]);
      if (action === 'cancel') {
        const result = await store.jobCancel({ jobId: id, actor, onlyFrom: CANCELLING[req.form.get('cancelling') ?? ''] });
        return { location: withNotice(back, `job.${result.outcome}`) };
      }
      if (action === 'replay') {
        await store.jobReplay({ jobId: id, actor });
        return { location: withNotice(back, 'job.replayed') };
      }
      if (action === 'run-now') {
        await store.jobRunNow({ jobId: id, actor });
        return { location: withNotice(back, 'job.run_now') };
      }
      return null;
    }
    case 'dead-letters': {
      const bulk = bulkActionOf(id);
      if (bulk === null || action !== undefined) return null;
      let skipped = 0;
      for (const jobId of bulkIds(req.form)) {
        try {
          // Both refuse a job that is no longer a dead letter, inside their own write.
          if (bulk === 'replay') await store.jobReplay({ jobId, actor });
          else await store.jobCancel({ jobId, actor, onlyFrom: DEAD_LETTER_STATES });
        } catch (error) {
          // Another operator replayed, cancelled or purged it since the page was drawn.
          if (!(error instanceof JobNotFoundError) && !(error instanceof IllegalTransitionError)) throw error;
          skipped += 1;
        }
      }
      return { location: withNotice(href(base, ['dead-letters']), skipped ? `bulk.${bulk}_partial` : `bulk.${bulk === 'replay' ? 'replayed' : 'cancelled'}`) };
    }
    case 'queues': {
      if (action === 'pause') await store.queuePause({ queue: id, actor });
      else if (action === 'resume') await store.queueResume({ queue: id, actor });
      else return null;
      return { location: withNotice(base || '/', `queue.${action}d`) };
    }
    case 'schedules': {
      if (!isScheduleAction(action)) return null;
      const back = href(base, ['schedules', id]);
      if (action === 'pause') await store.schedulePause({ scheduleId: id, actor });
      else if (action === 'resume') await store.scheduleResume({ scheduleId: id, actor });
      else if (action === 'trigger') await store.scheduleTrigger({ scheduleId: id, actor });
      else {
        const schedule = await store.scheduleGet({ scheduleId: id });
        if (!schedule) throw new ScheduleNotFoundError(id);
        await store.scheduleReplay({ scheduleId: id, actor });
      }
      return { location: withNotice(back, `schedule.${action === 'replay' ? 'replayed' : action === 'trigger' ? 'triggered' : `${action}d`}`) };
    }
    default:
      return null;
  }
}
