import { describe, expect, it } from '@jest/globals';
import { DEAD_LETTER_STATES, isDeadLetterState, SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore, type JobRow, type Outcome } from '../../lib/store/index.js';
import { EventLog, SequenceOracle, simUuid, StoreGateway, TERMINAL, VirtualScheduler, type Caller, type SimEvent } from '../../lib/simulator/index.js';
import { call, feed, row, running, T0, worker, write } from './history-builder.js';
import type { RowView } from '../../lib/simulator/index.js';

const producer = { kind: 'producer' } as const;
const operator = { kind: 'operator' } as const;

type Mode = 'block' | 'continue' | undefined;

/** One enqueue call of sequenced jobs, all of key `key` unless given, each written unless `created` says not. */
function enqueue(jobs: readonly (string | { id: string; key?: string; afterFailure?: Mode; created?: boolean })[], at = T0): SimEvent[] {
  const inputs = jobs.map((job) => (typeof job === 'string' ? { id: job } : job));
  const writes = inputs.filter((input) => input.created !== false).map((input) => write(undefined, row({ id: input.id, state: 'awaiting_parents' }), at));
  const logged = inputs.map(({ id, key = 'k', afterFailure }) => ({
    id,
    dependsOn: [],
    dependencyMode: 'on_success',
    concurrencyKey: null,
    concurrencyLimit: null,
    sequence: afterFailure === undefined ? { key } : { key, afterFailure },
  }));
  return [...writes, call('jobEnqueueMany', producer, logged, inputs.map(({ id, created = true }) => ({ id, created })), at)];
}

/** Rows of job `id` in the states the oracle reads. */
const waiting = (id: string) => row({ id, state: 'awaiting_parents' });
const due = (id: string, overrides: Partial<RowView> = {}) => row({ id, ...overrides });
const leased = (id: string, at: number, attempt = 1) => running({ id, attempt, workerId: `w-${id}`, leasedUntil: at + 5_000 });
const ended = (id: string, state: RowView['state'], attempt = 1) => row({ id, state, attempt });

/** The store gives `id` its turn (awaiting → scheduled), a worker claims it at `at`. */
const start = (id: string, at: number, from: RowView = waiting(id)): SimEvent[] => [
  write(from, due(id), at),
  write(due(id), leased(id, at), at),
  call('jobClaim', worker(`w-${id}`), [{}], [{ jobId: id, attempt: 1, leasedUntil: at + 5_000 }], at),
];
/** A claim of `id` with no release before it: the store let it go while it still waited. */
const jump = (id: string, at: number): SimEvent[] => [write(waiting(id), leased(id, at), at), call('jobClaim', worker(`w-${id}`), [{}], [], at)];
const end = (id: string, state: RowView['state'], at: number, attempt = 1): SimEvent[] => [
  write(leased(id, at - 1, attempt), ended(id, state, attempt), at),
  call('jobCompleteMany', worker(`w-${id}`), {}, [], at),
];
const cancelWaiting = (id: string, at: number): SimEvent[] => [write(waiting(id), ended(id, 'cancelled', 0), at), call('jobCancel', operator, [{ jobId: id }], null, at)];
const replay = (id: string, at: number): SimEvent[] => [write(ended(id, 'dead_lettered'), due(id, { attempt: 0 }), at), call('jobReplay', operator, [{ jobId: id }], null, at)];
const discard = (id: string, at: number): SimEvent[] => [write(ended(id, 'dead_lettered'), ended(id, 'cancelled'), at), call('jobCancel', operator, [{ jobId: id }], null, at)];

function judge(events: readonly SimEvent[]): SequenceOracle {
  const oracle = new SequenceOracle();
  feed(oracle, events);
  return oracle;
}

describe('sequence order oracle', () => {
  it('accepts jobs that start one at a time, each once the one before it ended, retries and reclaims included', () => {
    const retry = [write(leased('b', T0 + 150), ended('b', 'scheduled'), T0 + 200), write(ended('b', 'scheduled'), leased('b', T0 + 300, 2), T0 + 300), call('jobClaim', worker('w-b'), [{}], [], T0 + 300)];
    const reclaim = [write(leased('b', T0 + 300, 2), leased('b', T0 + 9_000, 3), T0 + 9_000), call('jobClaim', worker('w2'), [{}], [], T0 + 9_000)];
    const oracle = judge([
      ...enqueue(['a', 'b']),
      ...enqueue(['c'], T0 + 10),
      ...start('a', T0 + 20, due('a')),
      ...end('a', 'succeeded', T0 + 100),
      ...start('b', T0 + 150),
      ...retry,
      ...reclaim,
      ...end('b', 'succeeded', T0 + 9_500, 3),
      ...start('c', T0 + 9_600),
    ]);
    expect(oracle.report()).toMatchObject({ violations: 0 });
  });

  it('counts a job that starts before the job ahead of it ended, naming both', () => {
    const oracle = judge([...enqueue(['a', 'b', 'c']), ...start('a', T0 + 10, due('a')), ...end('a', 'succeeded', T0 + 20), ...jump('c', T0 + 30)]);
    expect(oracle.report()).toMatchObject({ violations: 1, examples: ['c (#3 of sequence k) started attempt 1 before its turn: b (#2) ahead of it was awaiting_parents'] });
  });

  it('counts two jobs of one sequence holding live leases at once, but not beside a lapsed lease', () => {
    // b jumps the line while a is due: out of turn; then a starts while b holds its lease.
    const both = judge([...enqueue(['a', 'b']), ...jump('b', T0 + 10), ...start('a', T0 + 20, due('a'))]);
    expect(both.report()).toMatchObject({ violations: 2, examples: [expect.stringContaining('b (#2 of sequence k) started attempt 1 before its turn'), 'a (#1 of sequence k) started attempt 1 while b (#2) held a live lease for 4990 ms more'] });
    // a's lease lapsed, and the sweep has not ended a yet: b is out of turn, but no lease overlaps.
    const lapsed = judge([...enqueue(['a', 'b']), ...start('a', T0, due('a')), ...jump('b', T0 + 5_000)]);
    expect(lapsed.report()).toMatchObject({ violations: 1, examples: [expect.stringContaining('ahead of it was running')] });
  });

  it('counts a start behind a failure that blocks it, block being the default', () => {
    for (const afterFailure of ['block', undefined] as const) {
      const oracle = judge([...enqueue(['a', { id: 'b', afterFailure }]), ...start('a', T0, due('a')), ...end('a', 'dead_lettered', T0 + 10), ...jump('b', T0 + 20)]);
      expect(oracle.report()).toMatchObject({ violations: 1, examples: ['b (#2 of sequence k) started attempt 1 before its turn: a (#1) ahead of it was dead_lettered, which holds it (afterFailure block)'] });
      expect(oracle.blocks).toBe(1);
    }
    // A quarantined job holds it the same way, and so does a failure the job was enqueued behind.
    const quarantined = judge([...enqueue(['a']), ...start('a', T0, due('a')), ...end('a', 'quarantined', T0 + 10), ...enqueue(['b'], T0 + 20), ...jump('b', T0 + 30)]);
    expect(quarantined.report().violations).toBe(1);
  });

  it("accepts a continue job that runs on past a failure, and judges afterFailure against the job just before", () => {
    const oracle = judge([
      ...enqueue(['a', { id: 'b', afterFailure: 'continue' }, 'c']),
      ...start('a', T0, due('a')),
      ...end('a', 'dead_lettered', T0 + 10),
      ...start('b', T0 + 20),
      ...end('b', 'succeeded', T0 + 30),
      // c blocks on failure, but the job before it is b, which succeeded.
      ...start('c', T0 + 40),
    ]);
    expect(oracle.report()).toMatchObject({ violations: 0 });
    expect(oracle.continues).toBe(1);
  });

  it('accepts the job a failure held once the failed job is replayed and succeeds, or is discarded', () => {
    const replayed = judge([
      ...enqueue(['a', 'b']),
      ...start('a', T0, due('a')),
      ...end('a', 'dead_lettered', T0 + 10),
      ...replay('a', T0 + 20),
      ...start('a', T0 + 30, due('a', { attempt: 0 })),
      ...end('a', 'succeeded', T0 + 40),
      ...start('b', T0 + 50),
    ]);
    expect(replayed.report()).toMatchObject({ violations: 0 });
    expect({ blocks: replayed.blocks, replaysReleased: replayed.replaysReleased }).toEqual({ blocks: 1, replaysReleased: 1 });
    // Replayed, the job runs again before the one it held: that one still waits.
    const early = judge([...enqueue(['a', 'b']), ...start('a', T0, due('a')), ...end('a', 'dead_lettered', T0 + 10), ...replay('a', T0 + 20), ...jump('b', T0 + 30)]);
    expect(early.report()).toMatchObject({ violations: 1, examples: [expect.stringContaining('ahead of it was scheduled')] });
    const discarded = judge([...enqueue(['a', 'b']), ...start('a', T0, due('a')), ...end('a', 'dead_lettered', T0 + 10), ...discard('a', T0 + 20), ...start('b', T0 + 30)]);
    expect(discarded.report()).toMatchObject({ violations: 0 });
  });

  it('keeps a job cancelled before its turn in line: the job after it still waits for the jobs before it', () => {
    const before = [...enqueue(['a', 'b', 'c']), ...start('a', T0, due('a')), ...cancelWaiting('b', T0 + 10)];
    const early = judge([...before, ...jump('c', T0 + 20)]);
    expect(early.report()).toMatchObject({ violations: 2, examples: ['c (#3 of sequence k) started attempt 1 before its turn: a (#1) ahead of it was running', expect.stringContaining('while a (#1) held a live lease')] });
    const inTurn = judge([...before, ...end('a', 'succeeded', T0 + 20), ...start('c', T0 + 30)]);
    expect(inTurn.report()).toMatchObject({ violations: 0 });
    expect(inTurn.cancelsInLine).toBe(1);
    // Cancelled in line behind a failure that blocks it, the job passes the block on, whatever the next job's mode.
    const blocked = judge([
      ...enqueue(['a', 'b', { id: 'c', afterFailure: 'continue' }]),
      ...start('a', T0, due('a')),
      ...cancelWaiting('b', T0 + 10),
      ...end('a', 'dead_lettered', T0 + 20),
      ...jump('c', T0 + 30),
    ]);
    expect(blocked.report()).toMatchObject({ violations: 1, examples: ['c (#3 of sequence k) started attempt 1 before its turn: a (#1) ahead of it was dead_lettered, which holds b (afterFailure block)'] });
  });

  it('counts a job replayed after the job behind it had its turn when it runs beside a later job, and not when it runs alone', () => {
    const passed = [...enqueue(['a', { id: 'b', afterFailure: 'continue' }, 'c']), ...start('a', T0, due('a')), ...end('a', 'dead_lettered', T0 + 10), ...start('b', T0 + 20), ...replay('a', T0 + 30)];
    // a's turn came long ago, so it may start again; but not while b runs, nor c while a runs.
    const beside = judge([...passed, ...start('a', T0 + 40, due('a', { attempt: 0 })), ...end('b', 'succeeded', T0 + 50), ...start('c', T0 + 60)]);
    expect(beside.report()).toMatchObject({ violations: 2, examples: ['a (#1 of sequence k) started attempt 1 while b (#2) held a live lease for 4980 ms more', 'c (#3 of sequence k) started attempt 1 while a (#1) held a live lease for 4980 ms more'] });
    const alone = judge([...passed, ...end('b', 'succeeded', T0 + 50), ...start('a', T0 + 60, due('a', { attempt: 0 })), ...end('a', 'succeeded', T0 + 70), ...start('c', T0 + 80)]);
    expect(alone.report()).toMatchObject({ violations: 0 });
  });

  it('orders jobs as the store wrote them: a batch in its order, other keys apart, a stored id joining nothing', () => {
    const oracle = judge([
      ...enqueue(['a', { id: 'x', key: 'other' }, 'b']),
      // A repeated enqueue of a (its reply was lost) is not written and joins nothing.
      ...enqueue([{ id: 'a', created: false }, 'c'], T0 + 5),
      ...start('x', T0 + 10, due('x')),
      ...start('a', T0 + 10, due('a')),
      ...end('a', 'succeeded', T0 + 20),
      ...start('b', T0 + 30),
      ...end('b', 'succeeded', T0 + 40),
      ...start('c', T0 + 50),
    ]);
    expect(oracle.report()).toMatchObject({ violations: 0 });
    // An enqueue the store refused wrote nothing, and the next job of its key comes first.
    const refused: SimEvent = { ...(enqueue(['z'])[1] as Extract<SimEvent, { type: 'call' }>), result: null, error: 'InvalidArgumentError: no' };
    expect(judge([refused, ...enqueue(['a']), ...start('a', T0 + 10, due('a'))]).report().violations).toBe(0);
    expect(judge([...enqueue(['a', 'b']), ...jump('b', T0 + 10)]).report().violations).toBe(1);
  });
});

describe('sequence order oracle against the in-memory store', () => {
  /**
   * Drives the store at random through the gateway, as the simulator does (enqueues of one to three
   * jobs into two keys in both modes, claims, every outcome, lapsed leases, cancels, replays of the
   * failures that block a sequence, discards), and after every call compares the oracle's turns with
   * the store's: a sequenced job that has not ended waits (awaiting_parents) exactly while the
   * oracle says its turn has not come. (A replay of a failure a `continue` job ran on past runs it
   * beside that job: the store lets it, which the oracle counts.)
   */
  it('gives each job its turn exactly when the store lets it go, and counts nothing the store does', async () => {
    const seen = { steps: 0, blocks: 0, continues: 0, cancelsInLine: 0, replaysReleased: 0 };
    const mismatches: string[] = [];
    for (let seed = 1; seed <= 40; seed++) {
      const r = new SeededRandom(BigInt(seed));
      const scheduler = new VirtualScheduler(T0);
      const oracle = new SequenceOracle();
      const log = new EventLog([oracle]);
      const store = new MemoryJobStore({ clock: scheduler, probe: StoreGateway.probe(log, scheduler) });
      const gateway = new StoreGateway(store, log, scheduler);
      const w: Caller = { kind: 'worker', workerId: 'w' };
      const pick = <T>(items: readonly T[]): T | undefined => (items.length === 0 ? undefined : items[r.nextInt(items.length)]);
      const rows = (test: (row: JobRow) => boolean) => store.rows().filter(test);
      for (let step = 0; step < 200; step++) {
        const roll = r.next();
        if (roll < 0.25) {
          const jobs = Array.from({ length: 1 + r.nextInt(3) }, () => {
            const mode = r.next();
            const sequence = { key: `k${r.nextInt(2)}`, ...(mode < 0.4 ? { afterFailure: 'continue' } : mode < 0.7 ? { afterFailure: 'block' } : {}) };
            return { id: simUuid(r), name: 'n', payload: null, maxAttempts: 2, sequence };
          });
          await gateway.execute({ kind: 'producer' }, 'jobEnqueueMany', [{ jobs }]);
        } else if (roll < 0.45) {
          await gateway.execute(w, 'jobClaim', [{ workerId: 'w', limit: 1 + r.nextInt(3), queues: ['default'], leaseMs: 1_000 }]);
        } else if (roll < 0.7) {
          const job = pick(rows((row) => row.state === 'running' && row.leasedUntil! > scheduler.now()));
          if (job === undefined) continue;
          const kind = pick(['succeeded', 'succeeded', 'failed', 'dead_lettered', 'quarantined'] as const)!;
          const outcome = { jobId: job.id, attempt: job.attempt, kind, error: 'broken', retryDelayMs: 0, reason: 'broken' } as Outcome;
          await gateway.execute(w, 'jobCompleteMany', [{ workerId: 'w', outcomes: [outcome] }]);
        } else if (roll < 0.8) {
          const job = pick(rows((row) => !TERMINAL.has(row.state)));
          if (job) await gateway.execute({ kind: 'operator' }, 'jobCancel', [{ jobId: job.id }]);
        } else if (roll < 0.9) {
          if (r.next() < 0.6) {
            const blocked = pick(await store.jobListBlockedSequences({ limit: 100 }));
            if (blocked) await gateway.execute({ kind: 'operator' }, 'jobReplay', [{ jobId: blocked.job.id }]);
          } else {
            const job = pick(rows((row) => isDeadLetterState(row.state)));
            if (job) await gateway.execute({ kind: 'operator' }, 'jobCancel', [{ jobId: job.id, onlyFrom: DEAD_LETTER_STATES }]);
          }
        } else {
          await scheduler.run(scheduler.now() + r.nextInt(1_500));
          await gateway.execute(w, 'jobExpireLeases', [{ limit: 100 }]);
        }
        seen.steps += 1;
        for (const job of rows((row) => row.sequenceKey !== null && !TERMINAL.has(row.state))) {
          if (oracle.hasTurn(job.id) !== (job.state !== 'awaiting_parents')) mismatches.push(`seed ${seed} step ${step}: ${job.id} is ${job.state}, the oracle says its turn has ${oracle.hasTurn(job.id) ? '' : 'not '}come`);
        }
      }
      expect({ seed, report: oracle.report() }).toEqual({ seed, report: { name: 'sequence_order', violations: 0, examples: [] } });
      seen.blocks += oracle.blocks;
      seen.continues += oracle.continues;
      seen.cancelsInLine += oracle.cancelsInLine;
      seen.replaysReleased += oracle.replaysReleased;
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
    // The walk reached every situation the oracle counts.
    expect(Object.values(seen).every((n) => n > 0)).toBe(true);
  });
});
