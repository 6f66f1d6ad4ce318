import type { JobRecord } from '../../core/index.js';
import type { DashboardStore } from '../http/dashboard-store.js';
import { liveNodes } from './live-nodes.js';
import type { WaitFacts } from './wait-reasons.js';

/** Live nodes that claim from `queue`, from the registry's most recently seen nodes. */
async function servingNodes(store: DashboardStore, queue: string, now: Date): Promise<number> {
  return liveNodes(await store.nodeList({ limit: 1_000 }), now).filter((node) => node.queues.includes(queue)).length;
}

/** How many holders of a full limit the page names. */
const HOLDERS_SHOWN = 20;

/**
 * Reads what {@link waitReasons} needs for one job, each read bounded: the queue's pause flag and
 * the store's clock, the two limits' holders (only when a limit is set), the two rate limits'
 * windows, the parents (only for a job awaiting them) and, for a batch's callback awaiting its
 * batch, the batch's counts. A finished job needs none of it.
 */
export async function gatherWaitFacts(store: DashboardStore, job: JobRecord): Promise<WaitFacts | null> {
  if (job.state !== 'scheduled' && job.state !== 'awaiting_parents' && job.state !== 'running') return null;
  const [oldest, queues] = await Promise.all([store.queueOldestDue({ queues: [job.queue] }), store.queueList({ queues: [job.queue] })]);
  const base = { job, now: oldest.now, queuePaused: false, queueLimit: null, keyLimit: null, queueRate: null, keyRate: null, parents: null, servingNodes: null, batch: null };
  if (job.state === 'running') return base;
  const limitOf = async (target: { queue: string } | { key: string }) => {
    const read = await store.limitHolders({ target, limit: HOLDERS_SHOWN });
    return read.max === null ? null : { max: read.max, holders: read.holders, truncated: read.truncated };
  };
  const callbackOf = job.state === 'awaiting_parents' && job.batch !== null && job.batch.callback !== null ? job.batch.id : null;
  const [queueLimit, keyLimit, queueRate, keyRate, edges, nodes, batch] = await Promise.all([
    limitOf({ queue: job.queue }),
    job.concurrencyKey === null ? null : limitOf({ key: job.concurrencyKey }),
    store.rateLimitStatus({ target: { queue: job.queue } }),
    job.concurrencyKey === null ? null : store.rateLimitStatus({ target: { key: job.concurrencyKey } }),
    job.state === 'awaiting_parents' ? store.jobEdges({ jobId: job.id, limit: 100 }) : null,
    servingNodes(store, job.queue, oldest.now),
    // A callback waits for its batch's jobs: their counts, without the failed ids.
    callbackOf === null ? null : store.jobBatch({ batchId: callbackOf, failedLimit: 0 }),
  ]);
  return {
    ...base,
    queuePaused: queues.some((queue) => queue.name === job.queue && queue.paused),
    queueLimit,
    keyLimit,
    queueRate,
    keyRate,
    parents: edges ? { edges: edges.parents, truncated: edges.parentsTruncated } : null,
    servingNodes: nodes,
    batch,
  };
}
