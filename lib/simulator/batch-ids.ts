import type { SeededRandom } from '../core/index.js';
import type { EnqueueBatchResult, MemoryJobStore, NewJob } from '../store/index.js';
import type { StoreDriver } from '../store/checked/store-driver.js';
import { simUuid } from './workload.js';

/**
 * Seeded ids for batches. `jobEnqueueBatch` mints the batch's id and its jobs' ids itself (UUIDv7:
 * the wall clock and the operating system's random bytes), and a run must be a function of its
 * seed. So the simulator rewrites them on their way into the store: the in-memory driver's insert
 * is wrapped so that every job that carries a batch id gets an id from a seeded stream of its own,
 * and so does its batch (a callback's parents are rewritten with them), and the batch's answer is
 * told in the same ids. Nothing else changes: the checked layer and the batch planner run as they
 * would, and the ids they minted are never seen. Jobs outside batches carry their own ids and pass
 * through untouched, and the stream is drawn only by batches, so a run without them is as before.
 */
export class BatchIds {
  /** Each minted id (a job's or a batch's) and the seeded one that stands for it. */
  private readonly seeded = new Map<string, string>();

  constructor(
    store: MemoryJobStore,
    private readonly random: SeededRandom,
  ) {
    const driver = (store as unknown as { driver: StoreDriver }).driver;
    const insert = driver.jobEnqueueMany.bind(driver);
    driver.jobEnqueueMany = (params) => insert({ ...params, jobs: params.jobs.map((job) => (job.batchId === undefined ? job : this.rewrite(job))) });
  }

  /** A batch's answer in the seeded ids: its jobs' ids came back from the insert already rewritten. */
  result(result: EnqueueBatchResult): EnqueueBatchResult {
    const callbacks = Object.fromEntries(Object.entries(result.callbacks).map(([key, id]) => [key, this.seeded.get(id as string) ?? id]));
    return { ...result, batchId: this.seeded.get(result.batchId) ?? result.batchId, callbacks };
  }

  /** The batch's jobs come first in an insert, so a callback's parents are rewritten by then. */
  private rewrite(job: NewJob): NewJob {
    return { ...job, id: this.of(job.id), batchId: this.of(job.batchId!), ...(job.dependsOn === undefined ? {} : { dependsOn: job.dependsOn.map((id) => this.seeded.get(id) ?? id) }) };
  }

  private of(minted: string): string {
    let id = this.seeded.get(minted);
    if (id === undefined) {
      id = simUuid(this.random);
      this.seeded.set(minted, id);
    }
    return id;
  }
}
