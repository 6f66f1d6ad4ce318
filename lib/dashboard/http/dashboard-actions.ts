import { DEAD_LETTER_STATES, IllegalTransitionError, JobNotFoundError, ScheduleNotFoundError, type JobState } from '../../core/index.js';
import { href } from '../html/html.js';
import { bulkActionOf, bulkIds } from './bulk-actions.js';
import { batchOf, isScheduleAction } from './dashboard-pages.js';
import type { DashboardRequest } from './dashboard-request.js';
import type { DashboardStore } from './dashboard-store.js';

/** Where an action sends the browser afterwards (303), with the key of its notice. */
export interface ActionResult {
  readonly location: string;
}

/** The states a cancel of work (a job that waits or runs) acts from; a job that finished since is refused. */
const WORK_STATES: readonly JobState[] = ['scheduled', 'awaiting_parents', 'running'];

/**
 * What a confirmed single cancel may act on, by what its question said (the form's `cancelling`):
 * a job that moved since (a dead letter replayed, a waiting job dead-lettered) is refused, not
 * cancelled. `cancelled` is allowed too, so confirming twice stays the no-op it always was. A POST
 * without the field cancels as the store does.
 */
function cancellingFrom(asked: string | null): readonly JobState[] | undefined {
  if (asked === 'dead_letter') return [...DEAD_LETTER_STATES, 'cancelled'];
  if (asked === 'work') return [...WORK_STATES, 'cancelled'];
  return undefined;
}

/**
 * Acts on each id in turn and counts those it skipped: a job that another operator changed, or
 * retention deleted, since the page was drawn is refused by the store inside its own write.
 */
async function eachSkipping(ids: readonly string[], act: (jobId: string) => Promise<unknown>): Promise<number> {
  let skipped = 0;
  for (const jobId of ids) {
    try {
      await act(jobId);
    } catch (error) {
      if (!(error instanceof JobNotFoundError) && !(error instanceof IllegalTransitionError)) throw error;
      skipped += 1;
    }
  }
  return skipped;
}

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
        const skipped = await eachSkipping(bulkIds(req.form), (jobId) => store.jobCancel({ jobId, actor, onlyFrom: WORK_STATES }));
        return { location: withNotice(href(base, ['jobs']), skipped ? 'jobs.cancel_partial' : 'jobs.cancelled') };
      }
      const back = href(base, ['jobs', id]);
      if (action === 'cancel') {
        const result = await store.jobCancel({ jobId: id, actor, onlyFrom: cancellingFrom(req.form.get('cancelling')) });
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
      const skipped = await eachSkipping(bulkIds(req.form), (jobId) =>
        bulk === 'replay' ? store.jobReplay({ jobId, actor }) : store.jobCancel({ jobId, actor, onlyFrom: DEAD_LETTER_STATES }),
      );
      return { location: withNotice(href(base, ['dead-letters']), skipped ? `bulk.${bulk}_partial` : `bulk.${bulk === 'replay' ? 'replayed' : 'cancelled'}`) };
    }
    case 'sequences': {
      // The dead-letter actions on the failed jobs, as the sequences page selected them; back there after.
      const bulk = bulkActionOf(id);
      if (bulk === null || action !== undefined) return null;
      const skipped = await eachSkipping(bulkIds(req.form), (jobId) =>
        bulk === 'replay' ? store.jobReplay({ jobId, actor }) : store.jobCancel({ jobId, actor, onlyFrom: DEAD_LETTER_STATES }),
      );
      return { location: withNotice(href(base, ['sequences']), skipped ? `sequences.${bulk}_partial` : `sequences.${bulk === 'replay' ? 'replayed' : 'cancelled'}`) };
    }
    case 'batches': {
      if (action !== 'cancel') return null;
      // An unknown batch is a 404, as its page is, rather than a cancel of nothing.
      const { id: batchId } = await batchOf(store, id);
      const { cancelled, cancelRequested } = await store.jobCancelBatch({ batchId, actor });
      const notice = cancelRequested > 0 ? 'batch.cancel_requested' : cancelled > 0 ? 'batch.cancelled' : 'batch.nothing_to_cancel';
      return { location: withNotice(href(base, ['batches', batchId]), notice) };
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
