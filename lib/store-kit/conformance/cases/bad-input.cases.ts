import { expect, it } from '@jest/globals';
import { PayloadTooLargeError } from '../../../core/index.js';
import type { EnqueueInput, JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, expectRefused, LEASE_MS, mustGet } from './helpers.js';

const circular: Record<string, unknown> = { a: 1 };
circular.self = circular;
const protoKey = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
let deep: unknown = 'leaf';
for (let i = 0; i < 80; i++) deep = [deep];

type BadEnqueue = [label: string, input: unknown, pattern: RegExp];

const BAD_ENQUEUES: BadEnqueue[] = [
  ['a circular payload', { name: 'x', payload: circular }, /payload contains a circular reference/],
  ['a BigInt in the payload', { name: 'x', payload: { n: 10n } }, /BigInt/],
  ['an undefined payload', { name: 'x', payload: undefined }, /must be a JSON value/],
  ['NaN in the payload', { name: 'x', payload: { n: Number.NaN } }, /NaN/],
  ['a function in the payload', { name: 'x', payload: { f: () => 1 } }, /function/],
  ['a Map in the payload', { name: 'x', payload: new Map([[1, 2]]) }, /Map/],
  ['a __proto__ key', { name: 'x', payload: protoKey }, /__proto__/],
  ['a NUL character', { name: 'x', payload: 'a\u0000b' }, /NUL/],
  ['nesting past the depth limit', { name: 'x', payload: deep }, /nested more than 64 levels/],
  ['an empty name', { name: '', payload: 1 }, /name must be 1 to 128 characters/],
  ['a name of 129 characters', { name: 'n'.repeat(129), payload: 1 }, /name must be 1 to 128 characters/],
  ['a name with a quote', { name: "o'brien", payload: 1 }, /name must be 1 to 128 characters/],
  ['a name with a newline', { name: 'a\nb', payload: 1 }, /name must be 1 to 128 characters/],
  ['a bad queue name', { name: 'x', payload: 1, queue: 'a b' }, /queue must be 1 to 64 characters/],
  ['maxAttempts 0', { name: 'x', payload: 1, maxAttempts: 0 }, /maxAttempts must be a whole number from 1 to 10000, got 0/],
  ['maxAttempts 1e9', { name: 'x', payload: 1, maxAttempts: 1e9 }, /maxAttempts must be a whole number/],
  ['maxAttempts 2.5', { name: 'x', payload: 1, maxAttempts: 2.5 }, /maxAttempts/],
  ['a negative delay', { name: 'x', payload: 1, delayMs: -1 }, /delayMs must be a finite number of milliseconds at or above 0, got -1/],
  ['a NaN delay', { name: 'x', payload: 1, delayMs: Number.NaN }, /delayMs/],
  ['an infinite delay', { name: 'x', payload: 1, delayMs: Number.POSITIVE_INFINITY }, /delayMs/],
  ['an invalid runAt', { name: 'x', payload: 1, runAt: new Date('nope') }, /runAt must be a valid Date/],
  ['runAt given as a string', { name: 'x', payload: 1, runAt: '2030-01-01' }, /runAt must be a valid Date/],
  ['both runAt and delayMs', { name: 'x', payload: 1, runAt: new Date(), delayMs: 5 }, /cannot both be set/],
  ['an id that is not a UUID', { name: 'x', payload: 1, id: 'job-1' }, /id must be a UUID/],
  ['an unknown option', { name: 'x', payload: 1, maxAttempt: 3 }, /maxAttempt is not a known enqueue option/],
  ['a payload over the size limit', { name: 'x', payload: 'y'.repeat(300) }, /over the limit of 256 bytes/],
  ['not an object', 'orders.confirm', /must be an object/],
];

// Every method that takes params refuses a params argument that is not an object, naming the
// fields it wants, before it reads or writes anything.
export const PARAMS_SHAPES: Array<[method: string, shape: string, optional: boolean]> = [
  ['jobEnqueue', '{ job, manager? }', false],
  ['jobEnqueueMany', '{ jobs, manager? }', false],
  ['jobClaim', '{ workerId, limit, queues, leaseMs, includeLapsed? }', false],
  ['jobHeartbeat', '{ workerId, leases, leaseMs }', false],
  ['jobCompleteMany', '{ workerId, outcomes }', false],
  ['jobRelinquishMany', '{ workerId, leases }', false],
  ['jobParentOutput', '{ jobId, ancestorId }', false],
  ['subscribeWakeHints', '{ listener }', false],
  ['jobGet', '{ jobId }', false],
  ['jobStatusMany', '{ jobIds }', false],
  ['jobList', '{ state?, queue?, name?, idPrefix?, enqueuedAfter?, enqueuedBefore?, order?, limit?, before?, after? }', true],
  ['jobListPage', '{ state?, queue?, name?, idPrefix?, enqueuedAfter?, enqueuedBefore?, order?, limit?, before?, after? }', true],
  ['jobEdges', '{ jobId, limit? }', false],
  ['limitHolders', '{ target, limit? }', false],
  ['queueOldestDue', '{ queues? }', true],
  ['jobThroughput', '{ since, bucketMs, queue? }', false],
  ['jobListDeadLettered', '{ limit? }', true],
  ['jobListBlockedSequences', '{ limit?, after? }', true],
  ['jobListGroups', '{ limit?, after? }', true],
  ['jobReplay', '{ jobId, actor? }', false],
  ['jobCancel', '{ jobId, actor?, onlyFrom? }', false],
  ['jobRunNow', '{ jobId, actor? }', false],
  ['jobHistory', '{ jobId, limit?, before? }', false],
  ['historyScan', '{ limit?, after? }', true],
  ['queueList', '{ limit?, after?, queues? }', true],
  ['concurrencyLimitList', '{ limit?, after? }', true],
  ['rateLimitList', '{ limit?, after? }', true],
  ['queuePause', '{ queue, actor? }', false],
  ['queueResume', '{ queue, actor? }', false],
  ['concurrencyLimitSet', '{ target, max, actor? }', false],
  ['auditList', '{ limit?, action?, before? }', true],
  ['auditAppend', '{ action, target, detail?, actor? }', false],
  ['scheduleUpsert', '{ schedule, actor? }', false],
  ['scheduleGet', '{ scheduleId }', false],
  ['scheduleList', '{ limit?, after? }', true],
  ['schedulePause', '{ scheduleId, actor? }', false],
  ['scheduleResume', '{ scheduleId, actor? }', false],
  ['scheduleTrigger', '{ scheduleId, actor? }', false],
  ['scheduleRemove', '{ scheduleId, actor? }', false],
  ['scheduleReplay', '{ scheduleId, actor? }', false],
  ['scheduleMintDue', '{ limit }', false],
  ['historyRead', '{ after?, limit }', false],
  ['observerLease', '{ observer, workerId, leaseMs, to?, jobs? }', false],
  ['observerCommit', '{ observer, workerId, position }', false],
  ['observerFail', '{ observer, workerId, error, retryDelayMs }', false],
  ['jobExpireLeases', '{ limit }', false],
  ['jobSettleDependencies', '{ limit }', false],
  ['historyTrim', '{ keep, limit }', false],
  ['maintenanceLease', '{ task, workerId, leaseMs }', false],
  ['jobPurge', '{ olderThanMs, limit }', false],
  ['jobCountsFold', '{ limit }', false],
  ['nodeBeat', '{ id, host, pid, version, queues, concurrency, running }', false],
  ['nodeStop', '{ id }', false],
  ['nodeList', '{ seenSince?, limit? }', true],
  ['observerList', '{ limit? }', true],
  ['nodePrune', '{ olderThanMs, limit }', false],
];

export function badInputCases(ctx: SuiteContext): void {
  it.each(BAD_ENQUEUES)('refuses %s before writing anything', async (_label, input, pattern) => {
    const h = await ctx.open({ limits: { maxPayloadBytes: 256 } });
    await enqueue(h.store, { name: 'existing' });
    const before = await h.snapshot();
    await expectRefused(() => h.store.jobEnqueue({ job: input as EnqueueInput }), pattern);
    await expectRefused(() => h.store.jobEnqueueMany({ jobs: [{ name: 'fine', payload: 1 }, input as EnqueueInput] }), pattern);
    expect(await h.snapshot()).toEqual(before);
  });

  it('reports an oversized payload with its size and the limit', async () => {
    const h = await ctx.open({ limits: { maxPayloadBytes: 100 } });
    const error = await h.store.jobEnqueue({ job: { name: 'x', payload: 'é'.repeat(60) } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error).toMatchObject({ bytes: 122, limit: 100, argument: 'payload' });
    // Exactly at the limit is allowed: sizes are inclusive.
    await expect(h.store.jobEnqueue({ job: { name: 'x', payload: 'a'.repeat(98) } })).resolves.toMatchObject({ created: true });
  });

  it('refuses a duplicate id inside one enqueueMany call', async () => {
    const h = await ctx.open();
    const id = '0190a5a0-0000-7000-8000-000000000abc';
    await expectRefused(
      () =>
        h.store.jobEnqueueMany({
          jobs: [
            { id, name: 'x', payload: 1 },
            { id, name: 'x', payload: 2 },
          ],
        }),
      /appears twice/,
    );
    expect(await h.countJobs()).toBe(0);
  });

  it('refuses an output over its limit and keeps the lease, so the attempt can still report', async () => {
    const h = await ctx.open({ limits: { maxOutputBytes: 32 } });
    const id = await enqueue(h.store);
    await claimOne(h.store, 'w');
    const before = await h.snapshot();
    await expectRefused(
      () => h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded', output: 'z'.repeat(40) }] }),
      /output is 42 bytes as JSON, over the limit of 32 bytes/,
      PayloadTooLargeError,
    );
    expect(await h.snapshot()).toEqual(before);
    expect((await mustGet(h.store, id)).state).toBe('running');
  });

  it('cuts an overlong error on a character boundary instead of refusing it', async () => {
    const h = await ctx.open({ limits: { maxErrorBytes: 10 } });
    const id = await enqueue(h.store, { maxAttempts: 1 });
    await claimOne(h.store, 'w');
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error: 'ab€€€€', retryDelayMs: 0 }] });
    expect((await mustGet(h.store, id)).lastError).toBe('ab€€');
  });

  const BAD_CALLS: Array<[string, (s: JobStore) => Promise<unknown>, RegExp]> = [
    ['a claim limit of 0', (s) => s.jobClaim({ workerId: 'w', limit: 0, queues: ['default'], leaseMs: LEASE_MS }), /limit must be a whole number from 1 to 1000/],
    ['a NaN lease', (s) => s.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: Number.NaN }), /leaseMs/],
    ['no queues', (s) => s.jobClaim({ workerId: 'w', limit: 1, queues: [], leaseMs: LEASE_MS }), /queues must be a non-empty array/],
    ['an empty worker id', (s) => s.jobClaim({ workerId: '', limit: 1, queues: ['default'], leaseMs: LEASE_MS }), /workerId/],
    ['includeLapsed as a string', (s) => s.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS, includeLapsed: 'no' as never }), /includeLapsed must be true or false/],
    ['a hostile queue name', (s) => s.jobClaim({ workerId: 'w', limit: 1, queues: ["x'; drop table y; --"], leaseMs: LEASE_MS }), /queues\[0\]/],
    ['a heartbeat for a non-UUID', (s) => s.jobHeartbeat({ workerId: 'w', leases: [{ jobId: 'nope', attempt: 1 }], leaseMs: LEASE_MS }), /leases\[0\]\.jobId must be a UUID/],
    [
      'an outcome of an unknown kind',
      (s) => s.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: '0190a5a0-0000-7000-8000-000000000001', attempt: 1, kind: 'done' } as never] }),
      /kind must be one of/,
    ],
    [
      'a negative retry delay',
      (s) =>
        s.jobCompleteMany({
          workerId: 'w',
          outcomes: [{ jobId: '0190a5a0-0000-7000-8000-000000000001', attempt: 1, kind: 'failed', error: 'e', retryDelayMs: -5 }],
        }),
      /retryDelayMs/,
    ],
    ['an attempt of 0', (s) => s.jobRelinquishMany({ workerId: 'w', leases: [{ jobId: '0190a5a0-0000-7000-8000-000000000001', attempt: 0 }] }), /attempt/],
    ['a sweep limit of -1', (s) => s.jobExpireLeases({ limit: -1 }), /limit/],
    ['a replay of a non-UUID', (s) => s.jobReplay({ jobId: '1; drop table jobs' }), /jobId must be a UUID/],
    ['a cancel of a non-UUID', (s) => s.jobCancel({ jobId: '' }), /jobId must be a UUID/],
    ['a cancel from an empty list of states', (s) => s.jobCancel({ jobId: '0190a5a0-0000-7000-8000-000000000001', onlyFrom: [] }), /^onlyFrom must be a non-empty list of job states/],
    ['a cancel from an unknown state', (s) => s.jobCancel({ jobId: '0190a5a0-0000-7000-8000-000000000001', onlyFrom: ['done' as never] }), /^onlyFrom must be a non-empty list of job states/],
    ['a get of a non-UUID', (s) => s.jobGet({ jobId: 'x' }), /jobId must be a UUID/],
    ['a list with an unknown state', (s) => s.jobList({ state: 'done' as never }), /state must be a job state/],
    ['a list limit of 5000', (s) => s.jobList({ limit: 5_000 }), /limit/],
    ['a list page before a non-UUID', (s) => s.jobListPage({ before: "1' OR '1'='1" }), /^before must be a UUID/],
    ['a list before a non-UUID', (s) => s.jobList({ before: 'x' }), /^before must be a UUID/],
    ['a fold limit of 0', (s) => s.jobCountsFold({ limit: 0 }), /limit/],
    ['a list id prefix that is not hex', (s) => s.jobListPage({ idPrefix: "0190' OR 1=1" }), /^idPrefix must be the start of a UUID/],
    ['a list id prefix with a misplaced hyphen', (s) => s.jobListPage({ idPrefix: '0190-a5a0' }), /^idPrefix must be the start of a UUID/],
    ['an empty list id prefix', (s) => s.jobListPage({ idPrefix: '' }), /^idPrefix must be the start of a UUID/],
    ['a list id prefix longer than a UUID', (s) => s.jobListPage({ idPrefix: `${'a'.repeat(32)}0` }), /^idPrefix must be the start of a UUID/],
    ['an invalid enqueuedAfter', (s) => s.jobListPage({ enqueuedAfter: new Date('nope') }), /^enqueuedAfter must be a valid Date/],
    ['enqueuedBefore as a string', (s) => s.jobListPage({ enqueuedBefore: '2030-01-01' as never }), /^enqueuedBefore must be a valid Date/],
    ['an unknown list order', (s) => s.jobListPage({ order: 'random' as never }), /^order must be newest or oldest/],
    ['a before with the oldest order', (s) => s.jobListPage({ order: 'oldest', before: '0190a5a0-0000-7000-8000-000000000001' }), /^before pages the newest order/],
    ['an after with the newest order', (s) => s.jobListPage({ after: '0190a5a0-0000-7000-8000-000000000001' }), /^after pages the oldest order/],
    ['edges of a non-UUID', (s) => s.jobEdges({ jobId: 'x' }), /^jobId must be a UUID/],
    ['an edge limit of 1001', (s) => s.jobEdges({ jobId: '0190a5a0-0000-7000-8000-000000000001', limit: 1_001 }), /^limit must be a whole number from 1 to 1000/],
    ['limit holders without a target', (s) => s.limitHolders({ target: {} as never }), /needs a target/],
    ['a holder limit of 0', (s) => s.limitHolders({ target: { queue: 'q' }, limit: 0 }), /^limit must be a whole number/],
    ['oldest due of a hostile queue name', (s) => s.queueOldestDue({ queues: ['ok', 'a"b'] }), /queues\[1\]/],
    ['oldest due of 1,001 queues', (s) => s.queueOldestDue({ queues: Array.from({ length: 1_001 }, (_, i) => `q${i}`) }), /^queues must be an array of at most 1000/],
    ['throughput since an invalid Date', (s) => s.jobThroughput({ since: new Date(Number.NaN), bucketMs: 60_000 }), /^since must be a valid Date/],
    ['a throughput bucket of 999 ms', (s) => s.jobThroughput({ since: new Date(0), bucketMs: 999 }), /^bucketMs must be a whole number of milliseconds from 1000 to 86400000/],
    ['throughput of a hostile queue name', (s) => s.jobThroughput({ since: new Date(0), bucketMs: 60_000, queue: "q'--" }), /queue/],
    ['pausing a hostile queue name', (s) => s.queuePause({ queue: 'a"b' }), /queue/],
  ];

  it.each(BAD_CALLS)('refuses %s with a typed error and changes nothing', async (_label, call, pattern) => {
    const h = await ctx.open();
    await enqueue(h.store);
    await claimOne(h.store, 'w');
    await enqueue(h.store);
    const before = await h.snapshot();
    await expectRefused(() => call(h.store), pattern);
    expect(await h.snapshot()).toEqual(before);
  });

  const NOT_OBJECTS: Array<[value: unknown, shown: string]> = [
    [undefined, 'undefined'],
    [null, 'null'],
    ['0190a5a0-0000-7000-8000-000000000001', '"0190a5a0-0000-7000-8000-000000000001"'],
    [[{ name: 'x', payload: 1 }], 'an array'],
  ];

  it.each(PARAMS_SHAPES)('%s refuses params that are not an object before writing anything', async (method, shape, optional) => {
    const h = await ctx.open();
    await enqueue(h.store);
    await claimOne(h.store, 'w');
    const before = await h.snapshot();
    const call = (h.store as unknown as Record<string, (params: unknown) => Promise<unknown>>)[method]!.bind(h.store);
    for (const [value, shown] of NOT_OBJECTS) {
      if (optional && value === undefined) continue;
      const message = `${method} takes a params object like ${shape}, got ${shown}.`;
      await expectRefused(() => call(value), new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    }
    expect(await h.snapshot()).toEqual(before);
  });
}
