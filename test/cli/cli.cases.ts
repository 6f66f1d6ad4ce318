import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LATEST_SCHEMA_VERSION, type JobStore } from '../../lib/store/index.js';
import { runCliBinary, runCliHere } from '../support/cli-run.js';

export interface CliTarget {
  /** The --conn value. */
  readonly conn: string;
  /** The --table value for this target's tables. */
  readonly table: string;
  /** A store on the same tables, for seeding and checking. */
  readonly store: JobStore;
  /** Another store on the same tables, under the lean finish: its node beats say so. */
  readonly leanStore: JobStore;
  /** Every row of the scheduler's tables. */
  snapshot(): Promise<unknown>;
  cleanup(): Promise<void>;
}

/**
 * Runs a command. The cases run the CLI in this process (test/support/cli-run.ts); the first case
 * runs the built binary, so what the process does (its output, its exit code) is held too.
 */
const cli = runCliHere;

/** Claims the job and fails it for good. */
async function deadLetter(store: JobStore, jobId: string, error: string, queue = 'default'): Promise<void> {
  const [job] = await store.jobClaim({ workerId: 'seed', limit: 1, queues: [queue], leaseMs: 60_000 });
  expect(job?.id).toBe(jobId);
  await store.jobCompleteMany({ workerId: 'seed', outcomes: [{ jobId, attempt: job!.attempt, kind: 'dead_lettered', error }] });
}

const ONE_SENTENCE = /^[^\n]+[.]\n$/;

export function cliCases(createTarget: () => Promise<CliTarget>): void {
  let t: CliTarget;
  let conn: string[];
  const ids: string[] = [];

  beforeAll(async () => {
    t = await createTarget();
    conn = ['--conn', t.conn, '--table', t.table];
    // 55 dead-lettered jobs, the last one with a long, two-line error.
    for (let i = 0; i < 55; i++) {
      const { id } = await t.store.jobEnqueue({ job: { name: 'billing.charge', payload: { invoice: i } } });
      await deadLetter(t.store, id, i === 54 ? `Error: card declined for invoice ${i} ${'x'.repeat(200)}\n    at charge (billing.ts:10:5)` : `Error: failed ${i}`);
      ids.push(id);
    }
  });

  afterAll(async () => t?.cleanup());

  it('the binary prints what the command prints, exits with its code, and ends once the command is done', async () => {
    const args = ['dead-letter', 'list', ...conn, '--format', 'json', '--limit', '3'];
    const [binary, here] = [await runCliBinary(args), await cli(args)];
    expect(binary).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(binary.stdout)).toEqual(JSON.parse(here.stdout));
    const refused = await runCliBinary(['dead-letter', 'replay', 'not-an-id', ...conn]);
    expect(refused).toMatchObject({ code: 1, stdout: '', stderr: 'ID must be a UUID, got "not-an-id".\n' });
    const none = await runCliBinary(['stats']);
    expect(none).toMatchObject({ code: 1, stderr: expect.stringMatching(/^No database given; /) });
    // A command that writes ends its process too (its pool closed), and the write is there.
    const { id } = await t.store.jobEnqueue({ job: { name: 'binary.cancel', payload: 1, queue: 'binary', delayMs: 3_600_000 } });
    expect(await runCliBinary(['cancel', id, ...conn])).toEqual({ code: 0, stdout: `Job ${id} (binary.cancel) is cancelled.\n`, stderr: '' });
    expect(await t.store.jobGet({ jobId: id })).toMatchObject({ state: 'cancelled' });
  });

  it('dead-letter list prints the 50 most recent by default, newest first, errors cut to one line', async () => {
    const run = await cli(['dead-letter', 'list', ...conn]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+SCHEDULE\s+ATTEMPTS\s+DEAD-LETTERED AT\s+LAST ERROR$/);
    expect(lines).toHaveLength(51);
    expect(lines[1]).toContain(ids[54]);
    expect(lines[1]).toMatch(/billing\.charge\s+-\s+1\/10\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+Error: card declined for invoice 54 x+…$/);
    expect(lines[50]).toContain(ids[5]);
    expect(run.stdout).not.toContain('billing.ts:10:5');
  });

  it('dead-letter list --format json gives full errors, and --limit caps it', async () => {
    const run = await cli(['dead-letter', 'list', ...conn, '--format', 'json', '--limit', '3']);
    expect(run.code).toBe(0);
    const rows = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.id)).toEqual([ids[54], ids[53], ids[52]]);
    expect(rows[0]).toMatchObject({ name: 'billing.charge', scheduleId: null, attempts: 1, maxAttempts: 10 });
    expect(rows[0]!.lastError).toContain('at charge (billing.ts:10:5)');
    expect(Date.parse(rows[0]!.deadLetteredAt as string)).toBeGreaterThanOrEqual(Date.parse(rows[1]!.deadLetteredAt as string));
  });

  it('dead-letter replay brings a job back, says so in one line, and audits who did it', async () => {
    const run = await cli(['dead-letter', 'replay', ids[0]!, ...conn]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe(`Replayed job ${ids[0]} (billing.charge): attempt 0, due now.\n`);
    expect(await t.store.jobGet({ jobId: ids[0]! })).toMatchObject({ state: 'scheduled', attempt: 0, lastError: null });
    const [audit] = await t.store.auditList({ limit: 1 });
    expect(audit).toMatchObject({ action: 'job.replay', target: ids[0], actor: expect.stringMatching(/^cli:.+@.+$/) });
  });

  it('dead-letter replay refuses a job that is not dead-lettered, with exit code 1', async () => {
    const before = await t.snapshot();
    const run = await cli(['dead-letter', 'replay', ids[0]!, ...conn]);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toBe(`Job ${ids[0]} is scheduled, not dead-lettered or quarantined; nothing to replay.\n`);
    expect(await t.snapshot()).toEqual(before);
    const missing = await cli(['dead-letter', 'replay', '0190a5a0-0000-7000-8000-00000000beef', ...conn]);
    expect(missing).toMatchObject({ code: 1, stderr: 'No job or schedule with id 0190a5a0-0000-7000-8000-00000000beef exists.\n' });
    const bad = await cli(['dead-letter', 'replay', 'not-an-id', ...conn]);
    expect(bad).toMatchObject({ code: 1, stderr: 'ID must be a UUID, got "not-an-id".\n' });
  });

  it('dead-letter replay has no --format option: passing one is refused and changes nothing', async () => {
    const before = await t.snapshot();
    const run = await cli(['dead-letter', 'replay', ids[1]!, ...conn, '--format', 'json']);
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe("Unknown option '--format'.\n");
    expect(await t.snapshot()).toEqual(before);
  });

  it('dead-letter replay accepts a schedule id: the occurrence that stopped it runs again and the schedule mints again', async () => {
    const { schedule } = await t.store.scheduleUpsert({ schedule: { name: 'report.build', everyMs: 60_000, maxAttempts: 1, queue: 'reports' } });
    const { id: occurrence } = await t.store.scheduleTrigger({ scheduleId: schedule.id });
    await deadLetter(t.store, occurrence, 'Error: report failed', 'reports');
    expect((await t.store.scheduleGet({ scheduleId: schedule.id }))?.state).toBe('dead_lettered');

    const listed = JSON.parse((await cli(['dead-letter', 'list', ...conn, '--format', 'json', '--limit', '1'])).stdout);
    expect(listed[0]).toMatchObject({ id: occurrence, scheduleId: schedule.id });

    const run = await cli(['dead-letter', 'replay', schedule.id, ...conn]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe(`Replayed schedule ${schedule.id} (report.build): occurrence ${occurrence} is due now and the schedule mints again.\n`);
    expect(await t.store.scheduleGet({ scheduleId: schedule.id })).toMatchObject({ state: 'active', haltedJobId: null });
    const again = await cli(['dead-letter', 'replay', schedule.id, ...conn]);
    expect(again).toMatchObject({ code: 1, stderr: `Schedule ${schedule.id} is active, not dead-lettered; nothing to replay.\n` });
  });

  it.each([['x; drop table y'], ['a"b'], ["o'brien"], ['jobs\nDROP'], ['s'.repeat(64) + '.jobs'], ['a.b.jobs'], ['orders']])(
    'refuses the --table value %j before any SQL runs',
    async (table) => {
      const before = await t.snapshot();
      const run = await cli(['dead-letter', 'list', '--conn', t.conn, '--table', table]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(ONE_SENTENCE);
      expect(run.stderr).toMatch(/--table/);
      expect(await t.snapshot()).toEqual(before);
    },
  );

  it('reports a missing table, a wrong connection and a missing one in one sentence, with a stack only under --verbose', async () => {
    const missing = await cli(['stats', '--conn', t.conn, '--table', 'nothing_here_jobs']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^No scheduler tables named \S*nothing_here_jobs exist at .+; check --table, or run "durable-scheduler migrate" first\.\n$/);

    const wrong = await cli(['stats', '--conn', 'postgres://postgres@127.0.0.1:1/nowhere']);
    expect(wrong).toMatchObject({ code: 1, stdout: '' });
    expect(wrong.stderr).toMatch(/^Could not connect to postgres:\/\/127\.0\.0\.1:1\/nowhere \(ECONNREFUSED\)\.\n$/);
    const none = await cli(['stats']);
    expect(none).toMatchObject({ code: 1, stderr: 'No database given; pass --conn postgres://user@host/db, --conn mysql://user@host/db or --conn sqlite:./file.db, or set DATABASE_URL.\n' });
    const odd = await cli(['stats', '--conn', 'mongodb://x']);
    expect(odd.stderr).toBe('The --conn value must start with postgres://, mysql://, mariadb:// or sqlite: (for example sqlite:./jobs.db).\n');

    const verbose = await cli(['dead-letter', 'replay', ids[0]!, ...conn, '--verbose']);
    expect(verbose.code).toBe(1);
    expect(verbose.stderr.split('\n').length).toBeGreaterThan(3);
    expect(verbose.stderr).toMatch(/\n\s+at /);
  });

  it('takes the connection from DATABASE_URL when --conn is absent', async () => {
    const run = await cli(['stats', '--table', t.table, '--format', 'json'], { DATABASE_URL: t.conn });
    expect(run.code).toBe(0);
    const stats = JSON.parse(run.stdout);
    expect(stats.counts).toEqual(expect.arrayContaining([{ queue: 'default', state: 'dead_lettered', count: 54 }]));
  });

  it('jobs list and show, cancel, queues pause and resume, schedules list, pause, resume and trigger', async () => {
    const { id } = await t.store.jobEnqueue({ job: { name: 'mail.send', payload: { to: 'secret@example.com' }, delayMs: 3_600_000, group: 'acme' } });
    const list = await cli(['jobs', 'list', ...conn, '--name', 'mail.send']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^ID\\s+NAME\\s+QUEUE\\s+STATE\\s+ATTEMPTS\\s+RUN AT\\s+LAST ERROR\\n${id}\\s+mail\\.send\\s+default\\s+scheduled\\s+0/10`));

    const show = await cli(['jobs', 'show', id, ...conn]);
    expect(show.stdout).toMatch(new RegExp(`^id\\s+${id}$`, 'm'));
    expect(show.stdout).toMatch(/^state\s+scheduled$/m);
    expect(show.stdout).toMatch(/^priority\s+0$/m);
    // Its group (docs/groups.md) prints as a line of its own, and in JSON.
    expect(show.stdout).toMatch(/^group\s+acme$/m);
    expect(show.stdout).not.toContain('secret@example.com'); // payloads only with --format json
    const shown = JSON.parse((await cli(['jobs', 'show', id, ...conn, '--format', 'json'])).stdout);
    expect(shown).toMatchObject({ payload: { to: 'secret@example.com' }, group: 'acme' });

    expect((await cli(['cancel', id, ...conn])).stdout).toBe(`Job ${id} (mail.send) is cancelled.\n`);
    expect((await cli(['cancel', id, ...conn])).stdout).toBe(`Job ${id} (mail.send) is already cancelled; nothing changed.\n`);

    // No job is in queue mail (mail.send runs in default), and the CLI says so (issue 19 item 15).
    expect((await cli(['queues', 'pause', 'mail', ...conn])).stdout).toBe('Queue mail is paused, but no stored job is in that queue; check the name (a queue can be paused before its first job).\n');
    expect((await cli(['queues', 'resume', 'mail', ...conn])).stdout).toBe('Queue mail is running, but no stored job is in that queue; check the name.\n');
    expect((await cli(['queues', 'pause', 'a b', ...conn])).code).toBe(1);

    const { schedule } = await t.store.scheduleUpsert({ schedule: { name: 'digest.send', cron: '0 7 * * *', timezone: 'Europe/Berlin' } });
    const schedules = await cli(['schedules', 'list', ...conn]);
    expect(schedules.stdout).toMatch(new RegExp(`${schedule.id}\\s+digest\\.send\\s+active\\s+cron "0 7 \\* \\* \\*" Europe/Berlin`));
    expect((await cli(['schedules', 'pause', schedule.id, ...conn])).stdout).toBe(`Schedule ${schedule.id} (digest.send) is paused.\n`);
    expect((await cli(['schedules', 'resume', schedule.id, ...conn])).stdout).toBe(`Schedule ${schedule.id} (digest.send) is active.\n`);
    const triggered = await cli(['schedules', 'trigger', schedule.id, ...conn]);
    expect(triggered.stdout).toMatch(new RegExp(`^Triggered schedule ${schedule.id}: occurrence [0-9a-f-]{36} is due now\\.\\n$`));
    const actions = (await t.store.auditList({ limit: 6 })).map((a) => a.action);
    expect(actions.slice(0, 3)).toEqual(['schedule.trigger', 'schedule.resume', 'schedule.pause']);
  });

  it('jobs list pages: a last line gives the next page\'s --before, and JSON carries it as next', async () => {
    const all = (await t.store.jobList({ state: 'dead_lettered', limit: 1_000 })).map((job) => job.id);
    expect(all.length).toBeGreaterThan(40);
    const first = await cli(['jobs', 'list', ...conn, '--state', 'dead_lettered', '--limit', '20']);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    const lines = first.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(22);
    expect(lines.slice(1, 21).map((line) => line.split(/\s+/)[0])).toEqual(all.slice(0, 20));
    expect(lines[21]).toBe(`Next page: add --before ${all[19]} to the same command.`);

    // JSON is the page and its cursor; following next to the end lists every job once.
    const seen: string[] = [];
    let before: string | null = all[19]!;
    while (before !== null) {
      const run = await cli(['jobs', 'list', ...conn, '--state', 'dead_lettered', '--limit', '20', '--before', before, '--format', 'json']);
      const page = JSON.parse(run.stdout) as { jobs: { id: string }[]; next: string | null };
      expect(Object.keys(page)).toEqual(['jobs', 'next']);
      seen.push(...page.jobs.map((job) => job.id));
      before = page.next;
    }
    expect(seen).toEqual(all.slice(20));
    const last = await cli(['jobs', 'list', ...conn, '--state', 'dead_lettered', '--limit', '20', '--before', all.at(-1)!]);
    expect(last.stdout).toBe('No jobs.\n');
  });

  it('jobs list refuses a --before that is not a UUID, or names no stored job, in one sentence', async () => {
    const bad = await cli(['jobs', 'list', ...conn, '--before', "x' OR 1=1"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^--before must be a UUID, got /);
    expect(bad.stderr).toMatch(ONE_SENTENCE);
    const missing = '0190a5a0-0000-7000-8000-00000000beef';
    const gone = await cli(['jobs', 'list', ...conn, '--before', missing]);
    expect(gone).toMatchObject({ code: 1, stdout: '' });
    expect(gone.stderr).toBe(`before names job ${missing}, which is not stored (retention may have deleted it since the page that named it); start again from the first page.\n`);
  });

  it('schedules list pages oldest first: a full page ends with the next page\'s --after', async () => {
    for (let i = 0; i < 3; i++) await t.store.scheduleUpsert({ schedule: { name: `page.${i}`, everyMs: 60_000 } });
    const all = (await t.store.scheduleList({ limit: 1_000 })).map((s) => s.id);
    expect(all.length).toBeGreaterThanOrEqual(3);
    const first = await cli(['schedules', 'list', ...conn, '--limit', '2']);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    const lines = first.stdout.trimEnd().split('\n');
    expect(lines.slice(1, 3).map((line) => line.split(/\s+/)[0])).toEqual(all.slice(0, 2));
    expect(lines[3]).toBe(`Next page: add --after ${all[1]} to the same command.`);
    const rest = JSON.parse((await cli(['schedules', 'list', ...conn, '--after', all[1]!, '--limit', '1000', '--format', 'json'])).stdout) as { id: string }[];
    expect(rest.map((s) => s.id)).toEqual(all.slice(2));
    const bad = await cli(['schedules', 'list', ...conn, '--after', 'nope']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^--after must be a UUID, got /);
    const missing = '0190a5a0-0000-7000-8000-00000000beef';
    expect((await cli(['schedules', 'list', ...conn, '--after', missing])).stderr).toBe(`after names schedule ${missing}, which is not stored; start again from the first page.\n`);
  });

  it('stats counts jobs per queue and state and ages the oldest due job', async () => {
    const run = await cli(['stats', ...conn]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^QUEUE\s+PAUSED\s+SCHEDULED\s+AWAITING_PARENTS\s+RUNNING\s+SUCCEEDED\s+DEAD_LETTERED\s+CANCELLED\s+QUARANTINED$/m);
    // 54 still dead-lettered (one was replayed and is due), one cancelled, one due in an hour.
    expect(run.stdout).toMatch(/^default\s+no\s+2\s+0\s+0\s+0\s+54\s+1\s+0$/m);
    expect(run.stdout).toMatch(/^Oldest due job has waited \d+ (ms|s|min|h)\.$/m);
  });

  it('issue 36 item 4: stats says what becomes of a job that succeeds, from the finish mode of the running nodes', async () => {
    const last = async () => (await cli(['stats', ...conn])).stdout.trimEnd().split('\n').at(-1);
    const counts = async () => {
      const { runningNodes, leanNodes } = JSON.parse((await cli(['stats', ...conn, '--format', 'json'])).stdout);
      return [runningNodes, leanNodes];
    };
    expect(await last()).toBe('No node is running, so none says what becomes of a job that succeeds.');
    const beat = { host: 'h', pid: 1, version: '1.0.0', queues: ['default'], concurrency: 1, running: 0 };
    await t.store.nodeBeat({ id: 'cli-keep', ...beat });
    expect(await last()).toBe('A job that succeeds is kept, with its history, until retention deletes it (finish: keep on every running node).');
    expect(await counts()).toEqual([1, 0]);
    await t.leanStore.nodeBeat({ id: 'cli-lean', ...beat });
    expect(await last()).toBe(
      'A job that succeeds without output, dependants, unique key or an observer that needs it is deleted at once, with its history, so it is in no count or chart (finish: lean on 1 of 2 running nodes; the others keep theirs).',
    );
    expect(await counts()).toEqual([2, 1]);
    await t.store.nodeStop({ id: 'cli-keep' });
    expect(await last()).toMatch(/\(finish: lean on every running node\)\.$/);
    await t.leanStore.nodeStop({ id: 'cli-lean' });
  });

  it('issue 19 item 15: queues list shows every queue with its pause state, and stats shows pause state too', async () => {
    const unused = await cli(['queues', 'pause', 'nosuchqueue', ...conn]);
    expect(unused).toEqual({ code: 0, stderr: '', stdout: 'Queue nosuchqueue is paused, but no stored job is in that queue; check the name (a queue can be paused before its first job).\n' });
    expect((await cli(['queues', 'pause', 'default', ...conn])).stdout).toBe('Queue default is paused.\n');

    const list = await cli(['queues', 'list', ...conn]);
    expect(list).toMatchObject({ code: 0, stderr: '' });
    expect(list.stdout).toMatch(/^QUEUE\s+PAUSED\s+SCHEDULED\s+AWAITING_PARENTS\s+RUNNING\s+SUCCEEDED\s+DEAD_LETTERED\s+CANCELLED\s+QUARANTINED\n/);
    expect(list.stdout).toMatch(/^default\s+yes\s+2\s+0\s+0\s+0\s+54\s+1\s+0$/m);
    expect(list.stdout).toMatch(/^mail\s+no(\s+0){7}$/m); // paused and resumed earlier, never used
    expect(list.stdout).toMatch(/^nosuchqueue\s+yes(\s+0){7}$/m);
    const paused = await cli(['queues', 'list', '--paused', ...conn, '--format', 'json']);
    expect(JSON.parse(paused.stdout)).toEqual([
      { name: 'default', paused: true, counts: { scheduled: 2, dead_lettered: 54, cancelled: 1 } },
      { name: 'nosuchqueue', paused: true, counts: {} },
    ]);
    expect(JSON.parse((await cli(['queues', 'list', ...conn, '--format', 'json'])).stdout)).toEqual(JSON.parse(JSON.stringify(await t.store.queueList())));

    const stats = await cli(['stats', ...conn]);
    expect(stats.stdout).toMatch(/^default\s+yes\s+2\s+0\s+0\s+0\s+54\s+1\s+0$/m);
    expect(stats.stdout).toMatch(/^nosuchqueue\s+yes(\s+0){7}$/m);
    expect(JSON.parse((await cli(['stats', ...conn, '--format', 'json'])).stdout).pausedQueues).toEqual(['default', 'nosuchqueue']);

    for (const queue of ['default', 'nosuchqueue']) expect((await cli(['queues', 'resume', queue, ...conn])).code).toBe(0);
    expect((await cli(['queues', 'list', '--paused', ...conn])).stdout).toBe('No queue is paused.\n');
  });

  it('migrate is idempotent and says where it stands', async () => {
    const run = await cli(['migrate', ...conn]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(new RegExp(` is already at schema version ${LATEST_SCHEMA_VERSION}\\.\\n$`));
  });

  // Last (with the cases after it): their jobs would change the counts the listings above expect.
  it("jobs show prints a running job's progress as one escaped line of JSON, and --format json as the value", async () => {
    const { id } = await t.store.jobEnqueue({ job: { name: 'report.build', payload: 1, queue: 'progress' } });
    const [job] = await t.store.jobClaim({ workerId: 'seed', limit: 1, queues: ['progress'], leaseMs: 60_000 });
    // Keys of one length in byte order: PostgreSQL's jsonb keeps keys in its own order, not the writer's.
    const progress = { done: 3, step: 'render\u202eevil\nline' };
    await t.store.jobHeartbeat({ workerId: 'seed', leases: [{ jobId: job!.id, attempt: 1, progress }], leaseMs: 60_000 });
    const show = await cli(['jobs', 'show', id, ...conn]);
    expect(show.stdout).toMatch(/^progress\s+\{"done":3,"step":"render.+evil\\nline"\}$/m);
    expect(show.stdout).not.toContain('\u202e');
    expect(JSON.parse((await cli(['jobs', 'show', id, ...conn, '--format', 'json'])).stdout).progress).toEqual(progress);
    const { id: quiet } = await t.store.jobEnqueue({ job: { name: 'report.build', payload: 2, delayMs: 3_600_000 } });
    expect((await cli(['jobs', 'show', quiet, ...conn])).stdout).toMatch(/^progress\s+-$/m);
    // Issue 39 item 5: a snoozed job shows its snoozes and the attempts they added.
    await t.store.jobCompleteMany({ workerId: 'seed', outcomes: [{ jobId: id, attempt: 1, kind: 'snoozed', delayMs: 3_600_000 }] });
    const snoozed = await cli(['jobs', 'show', id, ...conn]);
    expect(snoozed.stdout).toMatch(/^snoozes\s+1$/m);
    expect(snoozed.stdout).toMatch(/^maxAttempts\s+11$/m);
    expect(JSON.parse((await cli(['jobs', 'show', id, ...conn, '--format', 'json'])).stdout)).toMatchObject({ state: 'scheduled', attempt: 1, maxAttempts: 11, snoozes: 1 });
  });

  it('jobs show prints a debounce or throttle window, its kind, key and end, with hostile text made visible; --format json gives it exact', async () => {
    // A window key cannot hold C0 controls, but can hold a C1 control (\x9b is an 8-bit CSI), bidi controls and separators.
    const key = `<script>"&'</script> ünïcødé 🙂 \u202eevil\u2028 csi\x9b31m`;
    const shown = `<script>"&'</script> ünïcødé 🙂 \\u202eevil\\u2028 csi\\x9b31m`;
    const line = (stdout: string, field: string) => stdout.split('\n').find((text) => text.startsWith(`${field} `))?.replace(/^\S+\s+/, '');
    for (const kind of ['debounce', 'throttle'] as const) {
      const window = { key, windowMs: 3_600_000 };
      const { id } = await t.store.jobEnqueue({ job: { name: 'digest.send', payload: 1, queue: 'windows', ...(kind === 'debounce' ? { debounce: window } : { throttle: window }) } });
      const stored = (await t.store.jobGet({ jobId: id }))!.window;
      expect(stored).toMatchObject({ kind, key });
      const show = await cli(['jobs', 'show', id, ...conn]);
      expect(show).toMatchObject({ code: 0, stderr: '' });
      expect(line(show.stdout, 'window')).toBe(kind);
      expect(line(show.stdout, 'windowKey')).toBe(shown);
      expect(line(show.stdout, 'windowEndsAt')).toBe(stored!.endsAt.toISOString());
      expect(show.stdout).not.toMatch(/[\u202e\u2028\x9b]/);
      // The fields before and after it are still each on their own line.
      expect(show.stdout).toMatch(/^scheduleId\s+-\nwindow\s+\S+\nwindowKey\s+.+\nwindowEndsAt\s+\S+\nsequence\s+-\nbatch\s+-\nworkerId\s+-$/m);
      const asJson = await cli(['jobs', 'show', id, ...conn, '--format', 'json']);
      expect(asJson.stdout).not.toMatch(/[\u202e\u2028\x9b]/);
      expect(JSON.parse(asJson.stdout).window).toEqual({ kind, key, endsAt: stored!.endsAt.toISOString() });
    }
    const { id: plain } = await t.store.jobEnqueue({ job: { name: 'digest.send', payload: 1, queue: 'windows' } });
    const show = await cli(['jobs', 'show', plain, ...conn]);
    expect(show.stdout).toMatch(/^window\s+-$/m);
    expect(show.stdout).not.toMatch(/^windowKey/m);
    expect(JSON.parse((await cli(['jobs', 'show', plain, ...conn, '--format', 'json'])).stdout).window).toBeNull();
  });

  it('sequences blocked lists the sequences a failed job holds, by key, a page at a time; --format json gives them exact with the next key', async () => {
    expect(await cli(['sequences', 'blocked', ...conn])).toEqual({ code: 0, stdout: 'No sequence is blocked.\n', stderr: '' });
    // A sequence key cannot hold C0 controls, but can hold a C1 control (\x9b is an 8-bit CSI), bidi controls and separators.
    const hostile = `<script>"&'</script> ünïcødé 🙂 \u202eevil\u2028 csi\x9b31m`;
    const seeded: Record<string, { failed: string; next: string }> = {};
    for (const key of ['acct-b', hostile, 'acct-a']) {
      const { id: failed } = await t.store.jobEnqueue({ job: { name: 'acct.open', payload: 1, queue: 'sequences', maxAttempts: 1, sequence: { key } } });
      const { id: next } = await t.store.jobEnqueue({ job: { name: 'acct.deposit', payload: 2, queue: 'sequences', sequence: { key } } });
      await deadLetter(t.store, failed, `Error: ledger refused ${key === hostile ? 'it' : key}\n    at post (ledger.ts:1:1)`, 'sequences');
      seeded[key] = { failed, next };
    }
    // The order the store compares keys in.
    const keys = (await t.store.jobListBlockedSequences()).map((s) => s.key);
    expect([...keys].sort()).toEqual(['acct-a', 'acct-b', hostile].sort());

    const run = await cli(['sequences', 'blocked', ...conn]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^KEY\s+FAILED JOB\s+NAME\s+STATE\s+FAILED AT\s+NEXT JOB\s+LAST ERROR$/);
    expect(lines).toHaveLength(4);
    const a = seeded['acct-a']!;
    const row = lines.find((line) => line.startsWith('acct-a '))!;
    expect(row).toMatch(new RegExp(`^acct-a\\s+${a.failed}\\s+acct\\.open\\s+dead_lettered\\s+\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\s+${a.next}\\s+Error: ledger refused acct-a$`));
    expect(lines.slice(1).map((line) => line.split(/\s{2,}/)[0])).toEqual(keys.map((key) => (key === hostile ? `<script>"&'</script> ünïcødé 🙂 \\u202eevil\\u2028 csi\\x9b31m` : key)));
    expect(run.stdout).not.toMatch(/[\u202e\u2028\x9b]/);
    expect(run.stdout).not.toContain('ledger.ts');

    const asJson = await cli(['sequences', 'blocked', ...conn, '--format', 'json']);
    expect(asJson.stdout).not.toMatch(/[\u202e\u2028\x9b]/);
    const page = JSON.parse(asJson.stdout) as { sequences: Record<string, unknown>[]; next: string | null };
    expect(page.next).toBeNull();
    expect(page.sequences.map((s) => s.key)).toEqual(keys);
    expect(page.sequences.find((s) => s.key === 'acct-a')).toEqual({
      key: 'acct-a',
      jobId: a.failed,
      name: 'acct.open',
      queue: 'sequences',
      state: 'dead_lettered',
      attempt: 1,
      maxAttempts: 1,
      failedAt: (await t.store.jobGet({ jobId: a.failed }))!.finishedAt!.toISOString(),
      lastError: 'Error: ledger refused acct-a\n    at post (ledger.ts:1:1)',
      nextJobId: a.next,
    });

    // Paged: a full page ends with the --after of the next, which JSON gives as next.
    const first = await cli(['sequences', 'blocked', ...conn, '--limit', '1']);
    const firstKey = keys[0]!;
    expect(first.stdout.trimEnd().split('\n')).toHaveLength(3);
    const quoted = /^[A-Za-z0-9_.:/@%+=,-]+$/.test(firstKey) ? firstKey : null;
    if (quoted) expect(first.stdout).toMatch(new RegExp(`\\nNext page: add --after ${quoted} to the same command\\.\\n$`));
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const pageRun = await cli(['sequences', 'blocked', ...conn, '--limit', '1', '--format', 'json', ...(after === null ? [] : ['--after', after])]);
      const onePage = JSON.parse(pageRun.stdout) as { sequences: { key: string }[]; next: string | null };
      seen.push(...onePage.sequences.map((s) => s.key));
      after = onePage.next;
    } while (after !== null);
    expect(seen).toEqual(keys);
    expect((await cli(['sequences', 'blocked', ...conn, '--after', keys.at(-1)!])).stdout).toBe('No blocked sequence after that key.\n');
    // The hostile key as the last of a full page: shown escaped and single-quoted, and said to be so.
    const hostileAt = keys.indexOf(hostile);
    const toHostile = await cli(['sequences', 'blocked', ...conn, '--limit', String(hostileAt + 1)]);
    expect(toHostile.stdout.trimEnd().split('\n').at(-1)).toBe(
      `Next page: add --after '<script>"&'\\''</script> ünïcødé 🙂 \\u202eevil\\u2028 csi\\x9b31m' to the same command. (the key holds characters shown escaped; take it from --format json)`,
    );
    const bad = await cli(['sequences', 'blocked', ...conn, '--limit', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(ONE_SENTENCE);
    const badAfter = await cli(['sequences', 'blocked', ...conn, '--after', 'a\u0007b']);
    expect(badAfter).toMatchObject({ code: 1, stdout: '' });
    expect(badAfter.stderr).toMatch(ONE_SENTENCE);
    expect(badAfter.stderr).not.toContain('\u0007');

    // Replaying the failed job takes its sequence off the list; cancelling it releases the next job.
    expect((await cli(['dead-letter', 'replay', a.failed, ...conn])).code).toBe(0);
    const b = seeded['acct-b']!;
    expect((await cli(['cancel', b.failed, ...conn])).code).toBe(0);
    expect((await t.store.jobGet({ jobId: b.next }))!.state).toBe('scheduled');
    const left = JSON.parse((await cli(['sequences', 'blocked', ...conn, '--format', 'json'])).stdout) as { sequences: { key: string }[] };
    expect(left.sequences.map((s) => s.key)).toEqual([hostile]);
  });

  it('groups list lists the groups with waiting jobs by name, with due and later jobs, the oldest due run time and the cap; --format json gives them exact, a page at a time', async () => {
    // Other cases of this file leave grouped jobs too ('acme'); these groups sort after them.
    const hostile = `zz-groups <script>"&'</script> \u202eevil csi\x9b31m`;
    const { id: oldest } = await t.store.jobEnqueue({ job: { name: 'export.build', payload: 1, queue: 'groups', group: 'zz-groups a' } });
    await t.store.jobEnqueue({ job: { name: 'export.build', payload: 2, queue: 'groups', group: 'zz-groups a' } });
    await t.store.jobEnqueue({ job: { name: 'export.build', payload: 3, queue: 'groups', group: 'zz-groups a', delayMs: 3_600_000 } });
    await t.store.jobEnqueue({ job: { name: 'export.build', payload: 4, queue: 'groups', group: hostile } });
    await t.store.concurrencyLimitSet({ target: { key: 'zz-groups a' }, max: 4 });
    const dueAt = (await t.store.jobGet({ jobId: oldest }))!.runAt.toISOString();

    // The order the store compares groups in (a PostgreSQL database's collation may differ from byte order).
    const order = (await t.store.jobListGroups({ after: 'zz-groups' })).map((g) => g.group);
    expect([...order].sort()).toEqual([hostile, 'zz-groups a'].sort());

    const run = await cli(['groups', 'list', ...conn, '--after', 'zz-groups']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^GROUP\s+DUE\s+OLDEST DUE\s+LATER\s+CAP$/);
    expect(lines).toHaveLength(3);
    const rows = order.map((group) => lines[1 + order.indexOf(group)]!);
    expect(rows[order.indexOf(hostile)]).toMatch(new RegExp(`^zz-groups <script>"&'</script> \\\\u202eevil csi\\\\x9b31m\\s+1\\s+\\S+\\s+0\\s+-$`));
    expect(rows[order.indexOf('zz-groups a')]).toMatch(new RegExp(`^zz-groups a\\s+2\\s+${dueAt.replace(/\./g, '\\.')}\\s+1\\s+4$`));
    expect(run.stdout).not.toMatch(/[\u202e\x9b]/);

    const asJson = await cli(['groups', 'list', ...conn, '--after', 'zz-groups', '--format', 'json']);
    expect(asJson.stdout).not.toMatch(/[\u202e\x9b]/);
    const page = JSON.parse(asJson.stdout) as { groups: Record<string, unknown>[]; next: string | null };
    const exact = {
      [hostile]: { group: hostile, due: 1, dueCapped: false, later: 0, laterCapped: false, oldestDueAt: expect.any(String), concurrencyMax: null },
      'zz-groups a': { group: 'zz-groups a', due: 2, dueCapped: false, later: 1, laterCapped: false, oldestDueAt: dueAt, concurrencyMax: 4 },
    };
    expect(page).toEqual({ groups: order.map((group) => exact[group as keyof typeof exact]), next: null });
    // A full page ends with the --after of the next; the hostile group is shown escaped and single-quoted.
    const first = await cli(['groups', 'list', ...conn, '--after', 'zz-groups', '--limit', '1']);
    expect(first.stdout.trimEnd().split('\n').at(-1)).toBe(
      order[0] === hostile
        ? `Next page: add --after 'zz-groups <script>"&'\\''</script> \\u202eevil csi\\x9b31m' to the same command. (the group holds characters shown escaped; take it from --format json)`
        : `Next page: add --after 'zz-groups a' to the same command.`,
    );
    const next = JSON.parse((await cli(['groups', 'list', ...conn, '--after', 'zz-groups', '--limit', '1', '--format', 'json'])).stdout) as { next: string };
    expect(next.next).toBe(order[0]);
    const second = JSON.parse((await cli(['groups', 'list', ...conn, '--after', next.next, '--limit', '1', '--format', 'json'])).stdout) as { groups: { group: string }[] };
    expect(second.groups.map((g) => g.group)).toEqual([order[1]]);
    expect((await cli(['groups', 'list', ...conn, '--after', order[1]!])).stdout).toBe('No group with waiting jobs after that one.\n');

    const bad = await cli(['groups', 'list', ...conn, '--limit', '201']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('--limit must be a whole number from 1 to 200, got "201".\n');
    const badAfter = await cli(['groups', 'list', ...conn, '--after', 'a\u0007b']);
    expect(badAfter).toMatchObject({ code: 1, stdout: '' });
    expect(badAfter.stderr).toMatch(ONE_SENTENCE);
    expect(badAfter.stderr).not.toContain('\u0007');
  });

  it('jobs show prints a job\'s sequence, its afterFailure and the job it runs after; --format json gives them exact', async () => {
    const key = `ledger \u202eevil`;
    const line = (stdout: string, field: string) => stdout.split('\n').find((text) => text.startsWith(`${field} `))?.replace(/^\S+\s+/, '');
    const { id: first } = await t.store.jobEnqueue({ job: { name: 'acct.open', payload: 1, queue: 'sequence-show', delayMs: 3_600_000, sequence: { key } } });
    const { id: second } = await t.store.jobEnqueue({ job: { name: 'acct.deposit', payload: 2, queue: 'sequence-show', sequence: { key, afterFailure: 'continue' } } });
    const show = await cli(['jobs', 'show', second, ...conn]);
    expect(show).toMatchObject({ code: 0, stderr: '' });
    expect(line(show.stdout, 'sequence')).toBe('ledger \\u202eevil');
    expect(line(show.stdout, 'sequenceAfterFailure')).toBe('continue');
    expect(line(show.stdout, 'sequenceAfter')).toBe(`${first} (acct.open, scheduled)`);
    expect(show.stdout).not.toContain('\u202e');
    expect(show.stdout).toMatch(/^window\s+-\nsequence\s+.+\nsequenceAfterFailure\s+continue\nsequenceAfter\s+.+\nbatch\s+-\nworkerId\s+-$/m);
    const asJson = JSON.parse((await cli(['jobs', 'show', second, ...conn, '--format', 'json'])).stdout);
    expect(asJson.sequence).toEqual({ key, afterFailure: 'continue' });
    expect(asJson.sequenceAfter).toEqual({ id: first, name: 'acct.open', state: 'scheduled' });
    // The first of its sequence runs after none.
    const head = await cli(['jobs', 'show', first, ...conn]);
    expect(line(head.stdout, 'sequenceAfterFailure')).toBe('block');
    expect(line(head.stdout, 'sequenceAfter')).toBe('-');
    expect(JSON.parse((await cli(['jobs', 'show', first, ...conn, '--format', 'json'])).stdout)).toMatchObject({ sequence: { key, afterFailure: 'block' }, sequenceAfter: null });
    // A job in none prints one line, and JSON nulls.
    const { id: plain } = await t.store.jobEnqueue({ job: { name: 'acct.audit', payload: 3, queue: 'sequence-show', delayMs: 3_600_000 } });
    const plainShow = await cli(['jobs', 'show', plain, ...conn]);
    expect(plainShow.stdout).toMatch(/^sequence\s+-$/m);
    expect(plainShow.stdout).not.toMatch(/^sequenceAfter/m);
    expect(JSON.parse((await cli(['jobs', 'show', plain, ...conn, '--format', 'json'])).stdout)).toMatchObject({ sequence: null, sequenceAfter: null });
    // A listing gives each job's sequence, but reads no edges for the job it runs after.
    const listed = JSON.parse((await cli(['jobs', 'list', ...conn, '--queue', 'sequence-show', '--format', 'json'])).stdout).jobs as Record<string, unknown>[];
    expect(listed.map((job) => job.sequence)).toEqual([null, { key, afterFailure: 'continue' }, { key, afterFailure: 'block' }]);
    expect(listed.map((job) => 'sequenceAfter' in job)).toEqual([false, false, false]);
  });

  describe('batches', () => {
    const line = (stdout: string, field: string) => stdout.split('\n').find((text) => text.startsWith(`${field} `))?.replace(/^\S+\s+/, '');
    const callback = (name: string) => ({ name, payload: 0, queue: 'cli-batch-callbacks' });

    /** A batch of `size` jobs on `queue`, with onSuccess, onComplete and onFailure. */
    async function batchOf(queue: string, size: number) {
      const jobs = Array.from({ length: size }, (_, i) => ({ name: 'import.row', payload: { i }, queue, maxAttempts: 1 }));
      return t.store.jobEnqueueBatch({ jobs, onSuccess: callback('import.succeeded'), onComplete: callback('import.completed'), onFailure: callback('import.failed') });
    }

    it('batches list prints batches newest first with their progress and callbacks, a page at a time; --format json gives the page and the next --before', async () => {
      const first = await batchOf('cli-batch-a', 3);
      const [failed, done] = first.jobs.map((job) => job.id);
      await t.store.jobClaim({ workerId: 'seed', limit: 10, queues: ['cli-batch-a'], leaseMs: 60_000 });
      await t.store.jobCompleteMany({
        workerId: 'seed',
        outcomes: [
          { jobId: failed!, attempt: 1, kind: 'dead_lettered', error: 'Error: row refused' },
          { jobId: done!, attempt: 1, kind: 'succeeded' },
        ],
      });
      const second = await batchOf('cli-batch-b', 2);
      const all = (await t.store.jobListBatches({ limit: 200 })).map((batch) => batch.id);
      expect(all.slice(0, 2)).toEqual([second.batchId, first.batchId]);

      const run = await cli(['batches', 'list', ...conn]);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID\s+WRITTEN\s+TOTAL\s+PENDING\s+SUCCEEDED\s+FAILED\s+CANCELLED\s+ENDED\s+CALLBACKS$/);
      expect(lines.slice(1).map((text) => text.split(/\s+/)[0])).toEqual(all);
      expect(lines[1]).toMatch(new RegExp(`^${second.batchId}\\s+\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\s+2\\s+2\\s+0\\s+0\\s+0\\s+no\\s+success:awaiting_parents complete:awaiting_parents failure:awaiting_parents$`));
      expect(lines[2]).toMatch(new RegExp(`^${first.batchId}\\s+\\S+\\s+3\\s+1\\s+1\\s+1\\s+0\\s+no\\s+success:cancelled complete:awaiting_parents failure:awaiting_parents$`));

      // A page of one ends with the next page's --before; JSON carries it as next, and following it lists every batch once.
      const one = await cli(['batches', 'list', ...conn, '--limit', '1']);
      expect(one.stdout.trimEnd().split('\n').at(-1)).toBe(`Next page: add --before ${second.batchId} to the same command.`);
      const seen: string[] = [];
      let before: string | null = null;
      do {
        const page = JSON.parse((await cli(['batches', 'list', ...conn, '--limit', '1', '--format', 'json', ...(before === null ? [] : ['--before', before])])).stdout) as { batches: { id: string }[]; next: string | null };
        expect(Object.keys(page)).toEqual(['batches', 'next']);
        seen.push(...page.batches.map((batch) => batch.id));
        before = page.next;
      } while (before !== null);
      expect(seen).toEqual(all);
      const json = JSON.parse((await cli(['batches', 'list', ...conn, '--limit', '2', '--format', 'json'])).stdout) as { batches: Record<string, unknown>[]; next: string | null };
      // The page holds the two newest: a next page only when an older batch is stored.
      expect(json.next).toBe(all.length > 2 ? first.batchId : null);
      expect(JSON.parse((await cli(['batches', 'list', ...conn, '--limit', '1', '--format', 'json'])).stdout).next).toBe(second.batchId);
      const summary = (await t.store.jobBatch({ batchId: first.batchId }))!;
      expect(json.batches[1]).toEqual({
        id: first.batchId,
        createdAt: summary.createdAt.toISOString(),
        total: 3,
        pending: 1,
        succeeded: 1,
        failed: 1,
        cancelled: 0,
        ended: false,
        callbacks: [
          { kind: 'success', jobId: first.callbacks.onSuccess, state: 'cancelled' },
          { kind: 'complete', jobId: first.callbacks.onComplete, state: 'awaiting_parents' },
          { kind: 'failure', jobId: first.callbacks.onFailure, state: 'awaiting_parents' },
        ],
      });
      expect((await cli(['batches', 'list', ...conn, '--before', all.at(-1)!])).stdout).toBe('No batch was written before that one.\n');
      // The last page has no next line.
      expect((await cli(['batches', 'list', ...conn, '--limit', '1', '--before', all.at(-2)!])).stdout).not.toContain('Next page');

      // Bad input: one sentence each, 2 for a command line it cannot parse, 1 for a value it refuses.
      for (const limit of ['0', '201', 'x']) {
        const bad = await cli(['batches', 'list', ...conn, '--limit', limit]);
        expect(bad).toMatchObject({ code: 2, stdout: '' });
        expect(bad.stderr).toBe(`--limit must be a whole number from 1 to 200, got "${limit}".\n`);
      }
      const badBefore = await cli(['batches', 'list', ...conn, '--before', "x' OR 1=1"]);
      expect(badBefore).toMatchObject({ code: 1, stdout: '', stderr: `--before must be a UUID, got "x' OR 1=1".\n` });
      expect((await cli(['batches', 'list', ...conn, '--format', 'yaml'])).code).toBe(2);
    });

    it("batches show prints a batch's counts, callbacks and failed jobs, one line each; --format json gives the summary; an unknown or malformed id is refused in one sentence", async () => {
      const batch = await batchOf('cli-batch-show', 4);
      const ids = batch.jobs.map((job) => job.id);
      await t.store.jobClaim({ workerId: 'seed', limit: 10, queues: ['cli-batch-show'], leaseMs: 60_000 });
      await t.store.jobCompleteMany({
        workerId: 'seed',
        outcomes: [
          { jobId: ids[2]!, attempt: 1, kind: 'dead_lettered', error: 'Error: row refused' },
          { jobId: ids[0]!, attempt: 1, kind: 'quarantined', reason: 'no handler' },
          { jobId: ids[1]!, attempt: 1, kind: 'succeeded' },
        ],
      });
      const show = await cli(['batches', 'show', batch.batchId, ...conn]);
      expect(show).toMatchObject({ code: 0, stderr: '' });
      const summary = (await t.store.jobBatch({ batchId: batch.batchId }))!;
      expect(show.stdout).toBe(
        [
          `id         ${batch.batchId}`,
          `createdAt  ${summary.createdAt.toISOString()}`,
          'total      4',
          'pending    1',
          'succeeded  1',
          'failed     2',
          'cancelled  0',
          'ended      false',
          `callback   success  ${batch.callbacks.onSuccess} (cancelled)`,
          `callback   complete ${batch.callbacks.onComplete} (awaiting_parents)`,
          `callback   failure  ${batch.callbacks.onFailure} (awaiting_parents)`,
          ...[ids[0]!, ids[2]!].sort().map((id) => `failedJob  ${id}`),
          '',
        ].join('\n'),
      );
      const asJson = JSON.parse((await cli(['batches', 'show', batch.batchId, ...conn, '--format', 'json'])).stdout);
      expect(asJson).toEqual(JSON.parse(JSON.stringify(summary)));
      expect(asJson.failedJobIds).toEqual([ids[0]!, ids[2]!].sort());
      // A batch with no failed job prints a dash.
      const clean = await batchOf('cli-batch-clean', 1);
      expect(line((await cli(['batches', 'show', clean.batchId, ...conn])).stdout, 'failedJob')).toBe('-');

      const missing = '0190a5a0-0000-7000-8000-00000000beef';
      expect(await cli(['batches', 'show', missing, ...conn])).toEqual({ code: 1, stdout: '', stderr: `No batch with id ${missing} exists.\n` });
      // A job's id is not a batch's.
      expect((await cli(['batches', 'show', ids[0]!, ...conn])).stderr).toBe(`No batch with id ${ids[0]} exists.\n`);
      expect(await cli(['batches', 'show', 'not-an-id', ...conn])).toEqual({ code: 1, stdout: '', stderr: 'ID must be a UUID, got "not-an-id".\n' });
      const hostile = await cli(['batches', 'show', '\u001b[31mred\u202e', ...conn]);
      expect(hostile.code).toBe(1);
      expect(hostile.stderr).toMatch(ONE_SENTENCE);
      expect(hostile.stderr).not.toMatch(/[\u001b\u202e]/);
      expect((await cli(['batches', 'show', ...conn])).code).toBe(2);
    });

    it('batches cancel cancels every job of the batch that has not ended, callbacks first, each audited with the CLI actor; --dry-run changes nothing', async () => {
      const batch = await batchOf('cli-batch-cancel', 3);
      const [done, running, waiting] = batch.jobs.map((job) => job.id);
      await t.store.jobClaim({ workerId: 'seed', limit: 2, queues: ['cli-batch-cancel'], leaseMs: 60_000 });
      await t.store.jobCompleteMany({ workerId: 'seed', outcomes: [{ jobId: done!, attempt: 1, kind: 'succeeded' }] });
      expect((await t.store.jobGet({ jobId: waiting! }))!.state).toBe('scheduled');

      const before = await t.snapshot();
      const dry = await cli(['batches', 'cancel', batch.batchId, ...conn, '--dry-run']);
      expect(dry).toEqual({
        code: 0,
        stderr: '',
        stdout: `Batch ${batch.batchId}: 2 jobs of 3 pending and 3 callbacks not ended would be cancelled (a running one is asked to stop); run again without --dry-run to cancel them.\n`,
      });
      expect(await t.snapshot()).toEqual(before);

      const run = await cli(['batches', 'cancel', batch.batchId, ...conn]);
      expect(run).toEqual({
        code: 0,
        stderr: '',
        stdout: `Cancelled batch ${batch.batchId}: 4 waiting jobs and callbacks cancelled; 1 running job was asked to stop and ends cancelled when its attempt stops.\n`,
      });
      expect(await t.store.jobBatch({ batchId: batch.batchId })).toMatchObject({
        pending: 1,
        succeeded: 1,
        cancelled: 1,
        callbacks: [
          { kind: 'success', state: 'cancelled' },
          { kind: 'complete', state: 'cancelled' },
          { kind: 'failure', state: 'cancelled' },
        ],
      });
      expect(await t.store.jobGet({ jobId: running! })).toMatchObject({ state: 'running', cancelRequested: true });
      // One audit entry a job, callbacks first, each with the CLI's actor.
      const audits = (await t.store.auditList({ limit: 5 })).reverse();
      expect(audits.map((audit) => audit.action)).toEqual(['job.cancel', 'job.cancel', 'job.cancel', 'job.cancel', 'job.cancel']);
      expect(audits.every((audit) => /^cli:.+@.+$/.test(audit.actor))).toBe(true);
      expect(audits.slice(0, 3).map((audit) => audit.target).sort()).toEqual(Object.values(batch.callbacks).sort());
      expect(audits.slice(3).map((audit) => audit.target).sort()).toEqual([running!, waiting!].sort());

      // The running job was asked already; once it ends, nothing is left and nothing changes.
      expect((await cli(['batches', 'cancel', batch.batchId, ...conn])).stdout).toBe(`Batch ${batch.batchId}: what was pending ended before the cancel reached it; nothing changed.\n`);
      await t.store.jobCompleteMany({ workerId: 'seed', outcomes: [{ jobId: running!, attempt: 1, kind: 'failed', error: 'aborted', retryDelayMs: 0 }] });
      const settled = await t.snapshot();
      expect(await cli(['batches', 'cancel', batch.batchId, ...conn])).toEqual({ code: 0, stderr: '', stdout: `Batch ${batch.batchId} has ended, and so have its callbacks; nothing changed.\n` });
      expect(await t.snapshot()).toEqual(settled);

      const missing = '0190a5a0-0000-7000-8000-00000000beef';
      expect(await cli(['batches', 'cancel', missing, ...conn])).toEqual({ code: 1, stdout: '', stderr: `No batch with id ${missing} exists.\n` });
      expect(await cli(['batches', 'cancel', 'not-an-id', ...conn])).toEqual({ code: 1, stdout: '', stderr: 'ID must be a UUID, got "not-an-id".\n' });
      expect(await cli(['batches', 'cancel', batch.batchId, ...conn, '--format', 'json'])).toEqual({ code: 2, stdout: '', stderr: "Unknown option '--format'.\n" });
      expect(await t.snapshot()).toEqual(settled);
    });

    it("jobs show prints a job's batch and which callback of it the job is; --format json gives them as batch", async () => {
      const batch = await batchOf('cli-batch-jobs', 1);
      const member = await cli(['jobs', 'show', batch.jobs[0]!.id, ...conn]);
      expect(member).toMatchObject({ code: 0, stderr: '' });
      expect(line(member.stdout, 'batch')).toBe(batch.batchId);
      expect(line(member.stdout, 'batchCallback')).toBe('-');
      expect(member.stdout).toMatch(/^sequence\s+-\nbatch\s+\S+\nbatchCallback\s+-\nworkerId\s+/m);
      const onFailure = await cli(['jobs', 'show', batch.callbacks.onFailure!, ...conn]);
      expect(line(onFailure.stdout, 'batch')).toBe(batch.batchId);
      expect(line(onFailure.stdout, 'batchCallback')).toBe('failure');
      expect(JSON.parse((await cli(['jobs', 'show', batch.callbacks.onComplete!, ...conn, '--format', 'json'])).stdout).batch).toEqual({ id: batch.batchId, callback: 'complete' });
      expect(JSON.parse((await cli(['jobs', 'show', batch.jobs[0]!.id, ...conn, '--format', 'json'])).stdout).batch).toEqual({ id: batch.batchId, callback: null });
      // A job in none prints one line, and JSON null; a listing gives each job's batch too.
      const { id: plain } = await t.store.jobEnqueue({ job: { name: 'plain', payload: 1, queue: 'cli-batch-jobs', delayMs: 3_600_000 } });
      const plainShow = await cli(['jobs', 'show', plain, ...conn]);
      expect(plainShow.stdout).toMatch(/^batch\s+-$/m);
      expect(plainShow.stdout).not.toMatch(/^batchCallback/m);
      expect(JSON.parse((await cli(['jobs', 'show', plain, ...conn, '--format', 'json'])).stdout).batch).toBeNull();
      const listed = JSON.parse((await cli(['jobs', 'list', ...conn, '--queue', 'cli-batch-jobs', '--format', 'json'])).stdout).jobs as Record<string, unknown>[];
      expect(listed.map((job) => job.batch)).toEqual([null, { id: batch.batchId, callback: null }]);
    });

    it('the help names the batches commands and their options', async () => {
      // Help wraps at 80 columns: read it as one line.
      const help = async (...args: string[]) => {
        const run = await cli([...args, '--help']);
        expect(run).toMatchObject({ code: 0, stderr: '' });
        return run.stdout.replace(/\s+/g, ' ');
      };
      const top = await help();
      expect(top).toContain('Operate a nestjs-durable-scheduler store: dead letters, jobs, batches, schedules, sequences, groups, queues.');
      expect(top).toContain(' batches look at and cancel batches: jobs written together with enqueueBatch, and the callbacks that run when they end ');
      const batches = await help('batches');
      expect(batches).toContain(' list [options] batches, newest first, a page at a time, with their progress and callbacks ');
      expect(batches).toContain(' show [options] <id> one batch: its counts, its callbacks and the ids of its failed jobs ');
      expect(batches).toContain(' cancel [options] <id> cancel every job of a batch that has not ended, its callbacks first, so no callback runs; --dry-run says what it would cancel first ');
      expect(await help('batches', 'list')).toContain('--limit <n> how many (1 to 200) (default: 50) --before <id> only batches written before this one');
      expect(await help('batches', 'cancel')).toContain('--dry-run say what would be cancelled, and change nothing');
    });
  });
}
