import type { JobStore, LimitTarget } from '../store/index.js';
import { allJobs } from './job-listing.js';

/**
 * The earliest instant after `now` at which a waiting job can start, or null when none can: its
 * run time (a `runAt`, a `delayMs`, a retry's backoff), or for a due job held by a full rate limit,
 * when the limit's window frees a start. A job in a paused queue or held by a concurrency limit
 * starts no sooner with time, and counts only once its run time is ahead.
 */
export async function nextJobAt(store: JobStore, now: number): Promise<number | null> {
  const frees = new Map<string, Promise<number>>();
  // When the rate limit of a queue or key frees a start: -Infinity while it has one, or has no limit.
  const freeAt = (target: LimitTarget): Promise<number> => {
    const key = 'queue' in target ? `queue:${target.queue}` : `key:${target.key}`;
    let read = frees.get(key);
    if (!read) frees.set(key, (read = store.rateLimitStatus({ target }).then((status) => status?.fullUntil?.getTime() ?? Number.NEGATIVE_INFINITY)));
    return read;
  };
  let next: number | null = null;
  for (const job of await allJobs(store, { state: 'scheduled' })) {
    let at = job.runAt.getTime();
    if (at <= now) {
      // A due job nothing claimed is held by a paused queue, a concurrency limit or a rate limit;
      // only a rate limit frees with time, once every full one it is under has a start again.
      const rates = await Promise.all([freeAt({ queue: job.queue }), job.concurrencyKey === null ? Number.NEGATIVE_INFINITY : freeAt({ key: job.concurrencyKey })]);
      at = Math.max(...rates);
    }
    if (at > now && (next === null || at < next)) next = at;
  }
  return next;
}

/** Schedules read per page when looking for the next tick. */
const SCHEDULE_PAGE = 1_000;

/**
 * The earliest tick after `now` of a schedule that mints (state `active`), or null. Drain stops at
 * each tick on its way to a job's run time, so the occurrence is minted on time and runs then, as
 * a live minter would have it; a jump past it would count it missed.
 */
export async function nextTickAt(store: JobStore, now: number): Promise<number | null> {
  let next: number | null = null;
  let after: string | undefined;
  for (;;) {
    const page = await store.scheduleList({ limit: SCHEDULE_PAGE, ...(after === undefined ? {} : { after }) });
    for (const schedule of page) {
      const at = schedule.nextFireAt?.getTime();
      if (schedule.state === 'active' && at !== undefined && at > now && (next === null || at < next)) next = at;
    }
    if (page.length < SCHEDULE_PAGE) return next;
    after = page[page.length - 1]!.id;
  }
}
