import { describe, expect, it } from '@jest/globals';
import { IllegalTransitionError } from '../../lib/core/index.js';
import { BULK } from '../../lib/cli/commands/dead-letter.command.js';
import { cli, useDeadLetters } from './dead-letter-fixture.js';

describe('durable-scheduler dead-letter cancel-all', () => {
  const fixture = useDeadLetters('durable-scheduler-cancel-all-', [
    ['billing.charge', 'Error: card declined'],
    ['billing.charge', 'Error: card declined'],
    ['billing.charge', 'Error: timeout'],
  ]);
  const store = () => fixture.current.store;
  const conn = () => fixture.current.conn;
  const declined = () => fixture.current.ids.slice(0, 2);
  const other = () => fixture.current.ids.slice(2);

  it('refuses to run without a filter, in one sentence, and changes nothing', async () => {
    const run = await cli(['dead-letter', 'cancel-all', ...conn()]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toBe('dead-letter cancel-all needs a filter: pass --name, --error or both, or cancel one job with cancel <id>.\n');
    expect((await store().jobListDeadLettered()).length).toBe(3);
  });

  it('--dry-run lists the matches and cancels nothing', async () => {
    const run = await cli(['dead-letter', 'cancel-all', ...conn(), '--error', 'card declined', '--dry-run']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    for (const id of declined()) expect(run.stdout).toContain(id);
    for (const id of other()) expect(run.stdout).not.toContain(id);
    expect(run.stdout).toContain('2 would be cancelled; run again without --dry-run to cancel them.');
    expect((await store().jobListDeadLettered()).length).toBe(3);
  });

  it('cancels exactly the matches, keeping their errors, each audited as the CLI user', async () => {
    const run = await cli(['dead-letter', 'cancel-all', ...conn(), '--name', 'billing.charge', '--error', 'card declined']);
    expect(run).toMatchObject({ code: 0, stderr: '', stdout: 'Cancelled 2 of 2 matching dead letters: they keep their errors and history, and retention deletes them.\n' });
    for (const id of declined()) expect(await store().jobGet({ jobId: id })).toMatchObject({ state: 'cancelled', lastError: 'Error: card declined' });
    for (const id of other()) expect((await store().jobGet({ jobId: id }))!.state).toBe('dead_lettered');
    const audit = (await store().auditList()).filter((record) => record.action === 'job.cancel');
    expect(audit.map((record) => record.target).sort()).toEqual([...declined()].sort());
    expect(audit.every((record) => /^cli:.+@.+$/.test(record.actor))).toBe(true);
    expect((await store().jobListDeadLettered()).map((job) => job.id)).toEqual(other());
  });

  it('leaves alone a match that was replayed between the listing and the cancel', async () => {
    const [listed] = other();
    await store().jobReplay({ jobId: listed! });
    await expect(BULK.cancel.act(store(), listed!, 'cli:test')).rejects.toBeInstanceOf(IllegalTransitionError);
    expect((await store().jobGet({ jobId: listed! }))!.state).toBe('scheduled');
  });
});
