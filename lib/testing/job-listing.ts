import type { JobRecord, JobState } from '../core/index.js';
import type { JobStore } from '../store/index.js';

/** Every job the store holds (of one name or state, if given), oldest first, page after page. */
export async function allJobs(store: JobStore, filter: { readonly name?: string; readonly state?: JobState } = {}): Promise<JobRecord[]> {
  const jobs: JobRecord[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.jobListPage({ ...filter, order: 'oldest', limit: 1_000, ...(after === undefined ? {} : { after }) });
    jobs.push(...page.jobs);
    if (page.next === null) return jobs;
    after = page.next;
  }
}
