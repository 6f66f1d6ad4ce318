import { describe, expect, it } from '@jest/globals';
import { cli, useDeadLetters } from './dead-letter-fixture.js';

describe('durable-scheduler dead-letter replay-all', () => {
  const fixture = useDeadLetters('durable-scheduler-replay-all-', [
    ['billing.charge', 'Error: card declined\n    at charge (billing.ts:1:1)'],
    ['billing.charge', 'Error: card declined'],
    ['billing.charge', 'Error: timeout'],
    ['mail.send', 'Error: card declined'],
  ]);
  const store = () => fixture.current.store;
  const conn = () => fixture.current.conn;
  const declined = () => fixture.current.ids.slice(0, 2);
  const other = () => fixture.current.ids.slice(2);

  it('refuses to run without a filter, in one sentence, and changes nothing', async () => {
    const run = await cli(['dead-letter', 'replay-all', ...conn()]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toBe('dead-letter replay-all needs a filter: pass --name, --error or both, or replay one job with dead-letter replay <id>.\n');
    expect((await store().jobListDeadLettered()).length).toBe(4);
    expect((await cli(['dead-letter', 'replay-all', ...conn(), '--error', ''])).stderr).toContain('needs a filter');
    expect((await store().jobListDeadLettered()).length).toBe(4);
  });

  it('--dry-run lists the matches by name and error line and replays nothing', async () => {
    const run = await cli(['dead-letter', 'replay-all', ...conn(), '--name', 'billing.charge', '--error', 'card declined', '--dry-run']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    for (const id of declined()) expect(run.stdout).toContain(id);
    for (const id of other()) expect(run.stdout).not.toContain(id);
    expect(run.stdout).toContain('2 would be replayed; run again without --dry-run to replay them.');
    expect((await store().jobListDeadLettered()).length).toBe(4);
  });

  it('replays exactly the matches, each audited as the CLI user', async () => {
    const run = await cli(['dead-letter', 'replay-all', ...conn(), '--name', 'billing.charge', '--error', 'card declined']);
    expect(run).toMatchObject({ code: 0, stderr: '', stdout: 'Replayed 2 of 2 matching dead letters: attempt 0, due now.\n' });
    for (const id of declined()) expect((await store().jobGet({ jobId: id }))!.state).toBe('scheduled');
    for (const id of other()) expect((await store().jobGet({ jobId: id }))!.state).toBe('dead_lettered');
    const audit = (await store().auditList()).filter((record) => record.action === 'job.replay');
    expect(audit.map((record) => record.target).sort()).toEqual([...declined()].sort());
    expect(audit.every((record) => /^cli:.+@.+$/.test(record.actor))).toBe(true);
    expect((await cli(['dead-letter', 'replay-all', ...conn(), '--name', 'billing.charge', '--error', 'card declined'])).stdout).toBe('No dead letter among the 1000 most recent matches.\n');
  });
});
