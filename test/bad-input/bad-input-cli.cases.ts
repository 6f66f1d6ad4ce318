import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JobStore } from '../../lib/store/index.js';
import { runCliBinary, runCliHere, type CliRun } from '../support/cli-run.js';
import { HOSTILE, HOSTILE_NAMES, HOSTILE_TEXT, RAW_CONTROL, RULES } from './hostile.js';

export interface CliBadInputTarget {
  readonly kind: 'sqlite' | 'postgres' | 'mysql';
  /** The --conn value. */
  readonly conn: string;
  /** The --table value naming this target's tables. */
  readonly table: string;
  /** A --conn value for a database that does not exist yet, and a check that it still does not. */
  readonly freshConn: string;
  freshUntouched(): Promise<boolean>;
  /** A store on the same tables, for seeding and reading back. */
  readonly store: JobStore;
  /** Every row of every table in the target's database (SQLite) or schema (PostgreSQL). */
  snapshot(): Promise<unknown>;
  cleanup(): Promise<void>;
}

type Run = CliRun;

/** Runs a command in this process (test/support/cli-run.ts); one case below runs the built binary. */
const cli = runCliHere;

/** One refused command line: arguments after the connection flags, and what stderr must say. */
type Refusal = readonly [label: string, args: (conn: readonly string[]) => readonly string[], stderr: RegExp, code: number];

const ID_COMMANDS: ReadonlyArray<readonly string[]> = [
  ['cancel'],
  ['dead-letter', 'replay'],
  ['jobs', 'show'],
  ['schedules', 'pause'],
  ['schedules', 'resume'],
  ['schedules', 'trigger'],
  ['batches', 'show'],
  ['batches', 'cancel'],
];

const refusedNames = (rule: Record<string, string>) => HOSTILE_NAMES.filter((name) => rule[name] === 'refused');

export const CLI_REFUSALS: Refusal[] = [
  ...HOSTILE_NAMES.map((name): Refusal => [`--table ${JSON.stringify(HOSTILE[name])}`, (conn) => ['stats', '--conn', conn[1]!, '--table', HOSTILE[name]], /--table/, 1]),
  ...refusedNames(RULES.queue).flatMap((name): Refusal[] =>
    (['pause', 'resume'] as const).map((verb): Refusal => [`queues ${verb} ${JSON.stringify(HOSTILE[name])}`, (conn) => ['queues', verb, HOSTILE[name], ...conn], /^queue must be 1 to 64 characters/, 1]),
  ),
  ...refusedNames(RULES.queue).map((name): Refusal => [`jobs list --queue ${JSON.stringify(HOSTILE[name])}`, (conn) => ['jobs', 'list', '--queue', HOSTILE[name], ...conn], /^queue must be 1 to 64 characters/, 1]),
  ...ID_COMMANDS.flatMap((command) =>
    refusedNames(RULES.uuid).map((name): Refusal => [`${command.join(' ')} ${JSON.stringify(HOSTILE[name])}`, (conn) => [...command, HOSTILE[name], ...conn], /^ID must be a UUID/, 1]),
  ),
  ...refusedNames(RULES.uuid).map((name): Refusal => [`jobs list --before ${JSON.stringify(HOSTILE[name])}`, (conn) => ['jobs', 'list', '--before', HOSTILE[name], ...conn], /^--before must be a UUID/, 1]),
  ...refusedNames(RULES.uuid).map((name): Refusal => [`batches list --before ${JSON.stringify(HOSTILE[name])}`, (conn) => ['batches', 'list', '--before', HOSTILE[name], ...conn], /^--before must be a UUID/, 1]),
  ...['0', '201', 'NaN', "o'brien"].map((limit): Refusal => [`batches list --limit ${limit}`, (conn) => ['batches', 'list', '--limit', limit, ...conn], /^--limit must be a whole number from 1 to 200/, 2]),
  ['jobs list --name with a newline', (conn) => ['jobs', 'list', '--name', 'a\nb', ...conn], /^name must be 1 to 256 characters without control characters/, 1],
  ['jobs list --state done', (conn) => ['jobs', 'list', '--state', 'done', ...conn], /^Allowed choices are scheduled, /, 2],
  ...['0', '-1', 'NaN', '1e9', '2.5', "o'brien"].map((limit): Refusal => [`dead-letter list --limit ${limit}`, (conn) => ['dead-letter', 'list', '--limit', limit, ...conn], /^--limit must be a whole number from 1 to 1000/, 2]),
  ['jobs list --format xml', (conn) => ['jobs', 'list', '--format', 'xml', ...conn], /^--format must be text or json/, 2],
  ['an unknown option', (conn) => ['stats', '--bogus', ...conn], /^Unknown option '--bogus'\.$/, 2],
  // issue 35 item 7: a misspelt flag is refused as any unknown one is, and the sentence names the flag it most likely meant.
  ['issue 35 item 7: a misspelt flag, naming the nearest one', (conn) => ['jobs', 'list', '--limt', '5', ...conn], /^Unknown option '--limt' \(did you mean --limit\?\)\.$/, 2],
  ['issue 35 item 7: a misspelt flag after a command that takes an id', (conn) => ['dead-letter', 'replay', '0190a5a0-0000-7000-8000-000000000001', '--tabel', 'x', ...conn], /^Unknown option '--tabel' \(did you mean --table\?\)\.$/, 2],
  ['issue 35 item 7: a misspelt command, naming the nearest one', (conn) => ['job', 'list', ...conn], /^Unknown command 'job' \(did you mean jobs\?\)\.$/, 2],
  ['an unknown command', (conn) => ['drop', ...conn], /drop/, 2],
  ['a --conn that is none of postgres://, mysql://, mariadb:// and sqlite:', () => ['stats', '--conn', "mongodb://o'brien"], /^The --conn value must start with postgres:\/\/, mysql:\/\/, mariadb:\/\/ or sqlite:/, 1],
  // issue 19 item 15: a bad escape names the part of the URL, and never shows it (it may be the password).
  ...(
    [
      ['user name', 'postgres://us%zzer@127.0.0.1:5432/test'],
      ['password', 'postgres://postgres:s3cret%@127.0.0.1:5432/test'],
      ['database name', 'postgres://postgres@127.0.0.1:5432/te%E0st'],
    ] as const
  ).map(([part, url]): Refusal => [
    `issue 19 item 15: a --conn with a malformed percent-encoding in its ${part}`,
    () => ['stats', '--conn', url],
    new RegExp(`^The --conn value has a malformed percent-encoding in its ${part}; write a literal "%" as %25\\.$`),
    1,
  ]),
];

/**
 * The CLI with bad input: every refusal exits non-zero with one sentence on stderr and nothing on
 * stdout, and leaves every table as it was; identifiers a flag accepts are stored byte for byte.
 */
export function cliBadInputCases(createTarget: () => Promise<CliBadInputTarget>): void {
  let t: CliBadInputTarget;
  let conn: string[];

  beforeAll(async () => {
    t = await createTarget();
    conn = ['--conn', t.conn, '--table', t.table];
    await t.store.jobEnqueue({ job: { name: 'billing.charge', payload: { invoice: 1 } } });
    await t.store.scheduleUpsert({ schedule: { name: 'report.build', everyMs: 60_000 } });
  });

  afterAll(async () => t?.cleanup());

  describe('refused: exit code, one sentence on stderr, nothing changed', () => {
    it.each(CLI_REFUSALS)('%s', async (_label, args, stderr, code) => {
      const before = await t.snapshot();
      const run = await cli(args(conn));
      expect(run.code).toBe(code);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^[^\n]+\.\n$/);
      expect(run.stderr.replace(/\n$/, '')).toMatch(stderr);
      expect(await t.snapshot()).toEqual(before);
    });

    it.each(HOSTILE_NAMES)('migrate with the %s identifier as --table creates no database', async (name) => {
      const run = await cli(['migrate', '--conn', t.freshConn, '--table', HOSTILE[name]]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^[^\n]+\.\n$/);
      expect(await t.freshUntouched()).toBe(true);
    });
  });

  describe('issue 19 item 7: text from jobs reaches the terminal with its control characters made visible', () => {
    // Every hostile text as a dead letter's error, plus one whose escape straddles the list's cut.
    const errors = [...Object.values(HOSTILE_TEXT), `${'x'.repeat(57)}\u001b]8;;https://evil.example/\u0007link`];
    const ids: string[] = [];

    beforeAll(async () => {
      for (const error of errors) {
        const { id } = await t.store.jobEnqueue({ job: { name: 'hostile.text', payload: 1, queue: 'hostile', maxAttempts: 1 } });
        const [job] = await t.store.jobClaim({ workerId: 'seed', limit: 1, queues: ['hostile'], leaseMs: 60_000 });
        expect(job?.id).toBe(id);
        await t.store.jobCompleteMany({ workerId: 'seed', outcomes: [{ jobId: id, attempt: 1, kind: 'dead_lettered', error }] });
        ids.push(id);
      }
    });

    const expectNoRawControl = (run: Run) => {
      expect(run).toMatchObject({ code: 0, stderr: '' });
      const raw = [...run.stdout].filter((char) => RAW_CONTROL.test(char)).map((char) => char.codePointAt(0)!.toString(16));
      expect(raw).toEqual([]);
      expect(run.stdout).not.toMatch(/\p{Surrogate}/u);
    };

    it.each([
      ['dead-letter list', ['dead-letter', 'list']],
      ['jobs list', ['jobs', 'list', '--queue', 'hostile']],
      ['schedules list', ['schedules', 'list']],
    ])('%s in text', async (_label, args) => {
      const run = await cli([...args, ...conn]);
      expectNoRawControl(run);
      if (args[0] === 'schedules') return expect(run.stdout).toContain('report.build');
      // One line per job under the header: no error broke a line or overwrote one.
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(errors.length + 1);
      expect(run.stdout).toContain('\\x1b[31mred\\x1b[0m');
      expect(run.stdout).toContain('real error\\rforged line');
      // The cut comes after rendering: the straddling escape is shown whole or not at all.
      const straddling = lines.find((line) => line.includes(ids.at(-1)!))!;
      expect(straddling).toMatch(/x{49,57}…$/);
    });

    it('the binary writes the same text to its terminal, and refuses a command line the same way', async () => {
      const args = ['dead-letter', 'list', ...conn];
      const binary = await runCliBinary(args);
      expectNoRawControl(binary);
      expect(binary.stdout).toBe((await cli(args)).stdout);
      const [label, refused, stderr, code] = CLI_REFUSALS.find(([name]) => name.startsWith('dead-letter list --limit'))!;
      const run = await runCliBinary(refused(conn));
      expect(run).toMatchObject({ code, stdout: '' });
      expect(run.stderr).toMatch(stderr);
      expect(label).toMatch(/--limit/);
    });

    it('jobs show in text, each error on lines of its own under the value column', async () => {
      for (const [i, id] of ids.entries()) {
        const run = await cli(['jobs', 'show', id, ...conn]);
        expectNoRawControl(run);
        const lines = run.stdout.trimEnd().split('\n');
        const errorAt = lines.findIndex((line) => line.startsWith('lastError'));
        // Every field is one line; only the error's own line feeds continue it, indented.
        expect(lines.slice(errorAt + 1).every((line) => /^ {10,}\S/.test(line))).toBe(true);
        expect(lines.length - errorAt).toBe(errors[i]!.split('\n').length);
      }
    });

    it.each([
      ['dead-letter list', ['dead-letter', 'list', '--limit', '1000']],
      ['jobs list', ['jobs', 'list', '--queue', 'hostile', '--limit', '1000']],
    ])('%s in JSON gives the stored errors exactly, with nothing raw on the terminal', async (_label, args) => {
      const run = await cli([...args, ...conn, '--format', 'json']);
      expectNoRawControl(run);
      // dead-letter list prints an array; jobs list a page ({ jobs, next }).
      const parsed = JSON.parse(run.stdout) as { id: string; lastError: string }[] | { jobs: { id: string; lastError: string }[] };
      const listed = new Map((Array.isArray(parsed) ? parsed : parsed.jobs).map((row) => [row.id, row.lastError]));
      for (const id of ids) expect(listed.get(id)).toBe((await t.store.jobGet({ jobId: id }))!.lastError);
    });

    it('jobs show in JSON gives the stored error exactly: C0, C1, bidi, separators and surrogates alike', async () => {
      const keys = Object.keys(HOSTILE_TEXT);
      for (const key of ['colour', 'csi8bit', 'del', 'bidi', 'separator', 'surrogate'] as const) {
        const id = ids[keys.indexOf(key)]!;
        const run = await cli(['jobs', 'show', id, ...conn, '--format', 'json']);
        expectNoRawControl(run);
        expect((JSON.parse(run.stdout) as { lastError: string }).lastError).toBe((await t.store.jobGet({ jobId: id }))!.lastError);
      }
    });
  });

  describe('accepted: stored and read back byte for byte', () => {
    it.each(HOSTILE_NAMES.filter((name) => RULES.queue[name] === 'accepted'))('queues pause and resume with the %s identifier', async (name) => {
      const queue = HOSTILE[name];
      const paused = await cli(['queues', 'pause', queue, ...conn]);
      // No job is in the queue yet, and the CLI says so (issue 19 item 15).
      expect(paused).toEqual({ code: 0, stdout: `Queue ${queue} is paused, but no stored job is in that queue; check the name (a queue can be paused before its first job).\n`, stderr: '' });
      const [audit] = await t.store.auditList({ limit: 1 });
      expect(audit).toMatchObject({ action: 'queue.pause', target: queue });
      expect(JSON.stringify(await t.snapshot())).toContain(queue);
      // A paused queue is skipped by claims: the stored name is the one the claim asks for.
      const { id } = await t.store.jobEnqueue({ job: { name: 'billing.charge', payload: 1, queue } });
      expect(await t.store.jobClaim({ workerId: 'w', limit: 1, queues: [queue], leaseMs: 1_000 })).toEqual([]);
      expect(await cli(['queues', 'resume', queue, ...conn])).toEqual({ code: 0, stdout: `Queue ${queue} is running.\n`, stderr: '' });
      const listed = await cli(['jobs', 'list', '--queue', queue, '--format', 'json', ...conn]);
      expect(JSON.parse(listed.stdout)).toEqual({ jobs: [expect.objectContaining({ id, queue })], next: null });
    });
  });

  describe('issue 19 item 11: ids of any version and variant, in any form the Rust scheduler reads', () => {
    const nilLike = '00000000-0000-0000-0000-000000000001';
    const reserved = '12345678-9abc-fdef-f123-456789abcdef';
    const version0 = '12345678-9abc-0def-8123-456789abcdef';

    it('jobs show, cancel and dead-letter replay take them', async () => {
      await t.store.jobEnqueue({ job: { id: nilLike, name: 'billing.charge', payload: 1, delayMs: 60_000 } });
      const shown = await cli(['jobs', 'show', nilLike.replaceAll('-', ''), '--format', 'json', ...conn]);
      expect(shown.code).toBe(0);
      expect(JSON.parse(shown.stdout)).toMatchObject({ id: nilLike, state: 'scheduled' });
      expect(await cli(['cancel', `{${nilLike}}`, ...conn])).toEqual({ code: 0, stdout: `Job ${nilLike} (billing.charge) is cancelled.\n`, stderr: '' });
      await t.store.jobEnqueue({ job: { id: reserved, name: 'billing.charge', payload: 2, queue: 'foreign', maxAttempts: 1 } });
      const [claimed] = await t.store.jobClaim({ workerId: 'w', limit: 1, queues: ['foreign'], leaseMs: 60_000 });
      await t.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: claimed!.id, attempt: 1, kind: 'dead_lettered', error: 'boom' }] });
      const replayed = await cli(['dead-letter', 'replay', `urn:uuid:${reserved.toUpperCase()}`, ...conn]);
      expect(replayed).toEqual({ code: 0, stdout: `Replayed job ${reserved} (billing.charge): attempt 0, due now.\n`, stderr: '' });
      expect(await t.store.jobGet({ jobId: reserved })).toMatchObject({ state: 'scheduled', attempt: 0 });
    });

    it('schedules pause, resume and trigger take them', async () => {
      await t.store.scheduleUpsert({ schedule: { id: version0, name: 'report.build', everyMs: 60_000 } });
      expect(await cli(['schedules', 'pause', version0.toUpperCase(), ...conn])).toEqual({ code: 0, stdout: `Schedule ${version0} (report.build) is paused.\n`, stderr: '' });
      expect(await cli(['schedules', 'resume', version0, ...conn])).toEqual({ code: 0, stdout: `Schedule ${version0} (report.build) is active.\n`, stderr: '' });
      const triggered = await cli(['schedules', 'trigger', version0, ...conn]);
      expect(triggered).toMatchObject({ code: 0, stderr: '' });
      const occurrence = /occurrence ([0-9a-f-]{36}) is due now/.exec(triggered.stdout)?.[1];
      expect(await t.store.jobGet({ jobId: occurrence! })).toMatchObject({ scheduleId: version0, occurrenceId: occurrence });
    });
  });

}
