import { describe, expect, it } from '@jest/globals';
import { OccurrenceId } from '../../lib/core/index.js';
import { toJob, type JobRow } from '../../lib/store/job-row.js';

const row = (over: Partial<JobRow> = {}): JobRow => ({
  id: '01a22c2e-db27-7542-80d8-77d18c657b7f',
  seq: 1,
  name: 'n',
  queue: 'default',
  payload: '{"a":1}',
  state: 'running',
  runAt: Date.UTC(2026, 10, 30),
  priority: 0,
  attempt: 1,
  maxAttempts: 3,
  snoozes: 0,
  workerId: 'w',
  leasedUntil: Date.UTC(2026, 10, 30, 0, 1),
  cancelRequested: false,
  lastError: null,
  output: null,
  progress: null,
  finishedAt: null,
  updatedAt: Date.UTC(2026, 10, 30),
  scheduledFor: Date.UTC(2026, 10, 30),
  scheduleId: null,
  pendingParents: 0,
  dependencyMode: null,
  concurrencyKey: null,
  groupKey: null,
  uniqueKey: null,
  batchId: null,
  batchCallback: null,
  parentFailed: false,
  windowKind: null,
  windowKey: null,
  windowEndsAt: null,
  sequenceKey: null,
  sequenceMode: null,
  retry: null,
  traceparent: null,
  tracestate: null,
  createdAt: Date.UTC(2026, 10, 30),
  ...over,
});

describe('toJob', () => {
  it("derives a one-shot job's occurrence id when it is read, and carries it in JSON and spreads", () => {
    const job = toJob(row());
    // An enumerable accessor: nothing is hashed until someone reads it.
    const descriptor = Object.getOwnPropertyDescriptor(job, 'occurrenceId')!;
    expect(typeof descriptor.get).toBe('function');
    expect(descriptor.enumerable).toBe(true);
    const expected = OccurrenceId.derive(row().id, new Date(row().scheduledFor));
    expect(job.occurrenceId).toBe(expected);
    expect(job.occurrenceId).toBe(expected);
    expect(JSON.parse(JSON.stringify(job)).occurrenceId).toBe(expected);
    expect({ ...job }.occurrenceId).toBe(expected);
    expect(Object.keys(job)).toContain('occurrenceId');
  });

  it('gives a minted job its own id as occurrence id', () => {
    const job = toJob(row({ scheduleId: '5f0c7a57-0000-4000-8000-000000000001' }));
    expect(job.occurrenceId).toBe(row().id);
  });

  it('parses stored progress, and reads a job that never reported as null', () => {
    expect(toJob(row({ progress: '{"done":3,"of":10}' })).progress).toEqual({ done: 3, of: 10 });
    expect(toJob(row()).progress).toBeNull();
  });

  it('reports a window with its kind, key and end, and null for a job without one', () => {
    expect(toJob(row()).window).toBeNull();
    const end = Date.UTC(2026, 10, 30, 0, 5);
    expect(toJob(row({ windowKind: 'throttle', windowKey: 'k', windowEndsAt: end })).window).toEqual({ kind: 'throttle', key: 'k', endsAt: new Date(end) });
  });
});
