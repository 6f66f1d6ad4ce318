import { expect, it } from '@jest/globals';
import type { NodeBeatParams, NodeRecord } from '../../../store/index.js';
import type { StoreUnderTest, SuiteContext } from '../harness.js';
import { expectRefused } from './helpers.js';

const HOUR = 3_600_000;

function beat(id: string, fields: Partial<NodeBeatParams> = {}): NodeBeatParams {
  return { id, host: 'host-a', pid: 4242, version: '1.2.3', queues: ['default'], concurrency: 10, running: 0, ...fields };
}

async function only(h: StoreUnderTest, id: string): Promise<NodeRecord> {
  const found = (await h.store.nodeList({ limit: 1_000 })).filter((node) => node.id === id);
  expect(found).toHaveLength(1);
  return found[0]!;
}

const ids = (nodes: readonly NodeRecord[]) => nodes.map((node) => node.id);

export function nodeRegistryCases(ctx: SuiteContext): void {
  it('inserts a node on its first beat, stamped by the store with one instant for start and last seen', async () => {
    const h = await ctx.open();
    expect(await h.store.nodeList()).toEqual([]);
    await h.store.nodeBeat(beat('node-a', { queues: ['mail', 'default'], concurrency: 4, running: 2 }));
    const node = await only(h, 'node-a');
    expect(node).toEqual({
      id: 'node-a',
      host: 'host-a',
      pid: 4242,
      version: '1.2.3',
      queues: ['mail', 'default'],
      concurrency: 4,
      running: 2,
      startedAt: expect.any(Date),
      lastSeenAt: expect.any(Date),
      stoppedAt: null,
      finish: 'keep',
    });
    expect(node.lastSeenAt.getTime()).toBe(node.startedAt.getTime());
  });

  it('updates last seen, running, queues and concurrency on later beats, and keeps when the node started', async () => {
    const h = await ctx.open();
    await h.store.nodeBeat(beat('node-a', { running: 1 }));
    await h.advance(5_000);
    const before = await only(h, 'node-a');
    await h.store.nodeBeat(beat('node-a', { running: 3, queues: ['other'], concurrency: 7, pid: 99, host: 'host-b', version: '1.2.4' }));
    const after = await only(h, 'node-a');
    expect(after).toMatchObject({ running: 3, queues: ['other'], concurrency: 7, pid: 99, host: 'host-b', version: '1.2.4', stoppedAt: null });
    expect(after.startedAt).toEqual(before.startedAt);
    expect(after.lastSeenAt.getTime() - after.startedAt.getTime()).toBeGreaterThanOrEqual(5_000);
    expect(after.lastSeenAt.getTime()).toBeGreaterThan(before.lastSeenAt.getTime());
  });

  it('records a graceful stop once, and starts a new run when the same id beats again', async () => {
    const h = await ctx.open();
    await h.store.nodeBeat(beat('node-a', { running: 2 }));
    await h.store.nodeBeat(beat('node-b'));
    await h.advance(1_000);
    await h.store.nodeStop({ id: 'node-a' });
    const stopped = await only(h, 'node-a');
    expect(stopped.stoppedAt).toBeInstanceOf(Date);
    expect(stopped).toMatchObject({ running: 0, lastSeenAt: stopped.stoppedAt });
    expect(stopped.stoppedAt!.getTime() - stopped.startedAt.getTime()).toBeGreaterThanOrEqual(1_000);
    expect((await only(h, 'node-b')).stoppedAt).toBeNull();
    // A second stop, and the stop of a node never registered, change nothing.
    await h.store.nodeStop({ id: 'node-a' });
    await h.store.nodeStop({ id: 'never-beat' });
    expect(await only(h, 'node-a')).toEqual(stopped);
    expect(ids(await h.store.nodeList())).not.toContain('never-beat');
    // The same worker id beating after its stop is a node restarted under that id: a new run.
    await h.advance(1_000);
    const stoppedAt = (await only(h, 'node-a')).stoppedAt!;
    await h.store.nodeBeat(beat('node-a'));
    const again = await only(h, 'node-a');
    expect(again.stoppedAt).toBeNull();
    expect(again.startedAt).toEqual(again.lastSeenAt);
    expect(again.startedAt.getTime() - stoppedAt.getTime()).toBeGreaterThanOrEqual(1_000);
  });

  it('lists nodes most recently seen first, bounded by the limit (100 by default) and by seenSince', async () => {
    const h = await ctx.open();
    for (const id of ['a', 'b', 'c']) {
      await h.store.nodeBeat(beat(id));
      await h.advance(1_000);
    }
    // a beats again: it is now the most recently seen.
    await h.store.nodeBeat(beat('a'));
    expect(ids(await h.store.nodeList())).toEqual(['a', 'c', 'b']);
    expect(ids(await h.store.nodeList({ limit: 2 }))).toEqual(['a', 'c']);
    const c = await only(h, 'c');
    expect(ids(await h.store.nodeList({ seenSince: c.lastSeenAt }))).toEqual(['a', 'c']);
    expect(ids(await h.store.nodeList({ seenSince: new Date(c.lastSeenAt.getTime() + 1) }))).toEqual(['a']);

    for (let i = 0; i < 101; i++) await h.store.nodeBeat(beat(`many-${String(i).padStart(3, '0')}`));
    const page = await h.store.nodeList();
    expect(page).toHaveLength(100);
    const seen = page.map((node) => node.lastSeenAt.getTime());
    expect(seen).toEqual([...seen].sort((x, y) => y - x));
    expect(await h.store.nodeList({ limit: 1_000 })).toHaveLength(104);
  });

  it('prunes only nodes not seen for longer than the retention, stopped or not, a bounded batch at a time, oldest first', async () => {
    const h = await ctx.open();
    for (const id of ['old-1', 'old-2', 'old-3']) {
      await h.store.nodeBeat(beat(id));
      await h.advance(1_000);
    }
    await h.store.nodeStop({ id: 'old-3' });
    await h.advance(2 * HOUR);
    await h.store.nodeBeat(beat('fresh'));
    await h.store.nodeBeat(beat('fresh-stopped'));
    await h.store.nodeStop({ id: 'fresh-stopped' });

    expect(await h.store.nodePrune({ olderThanMs: HOUR, limit: 2 })).toBe(2);
    expect(ids(await h.store.nodeList()).sort()).toEqual(['fresh', 'fresh-stopped', 'old-3']);
    expect(await h.store.nodePrune({ olderThanMs: HOUR, limit: 100 })).toBe(1);
    expect(await h.store.nodePrune({ olderThanMs: HOUR, limit: 100 })).toBe(0);
    expect(ids(await h.store.nodeList()).sort()).toEqual(['fresh', 'fresh-stopped']);
  });

  it('refuses a bad beat, stop, listing or prune before writing anything', async () => {
    const h = await ctx.open();
    await h.store.nodeBeat(beat('node-a'));
    const before = await h.store.nodeList();
    await expectRefused(() => h.store.nodeBeat(beat('')), /^id must be 1 to 256 characters/);
    await expectRefused(() => h.store.nodeBeat(beat('node-a', { host: 'a\nb' })), /^host must be/);
    await expectRefused(() => h.store.nodeBeat(beat('node-a', { pid: -1 })), /^pid must be a whole number from 0/);
    await expectRefused(() => h.store.nodeBeat(beat('node-a', { version: 'v'.repeat(65) })), /^version must be 1 to 64 characters/);
    await expectRefused(() => h.store.nodeBeat(beat('node-a', { queues: [] })), /^queues must be an array of 1 to 1000 queue names/);
    await expectRefused(() => h.store.nodeBeat(beat('node-a', { queues: ['bad queue'] })), /^queues\[0\]/);
    await expectRefused(() => h.store.nodeBeat(beat('node-a', { concurrency: 0 })), /^concurrency must be a whole number from 1/);
    await expectRefused(() => h.store.nodeBeat(beat('node-a', { running: 1.5 })), /^running must be a whole number from 0/);
    await expectRefused(() => h.store.nodeStop({ id: 'x'.repeat(257) }), /^id must be 1 to 256 characters/);
    await expectRefused(() => h.store.nodeList({ limit: 1_001 }), /^limit must be a whole number from 1 to 1000/);
    await expectRefused(() => h.store.nodeList({ seenSince: new Date(Number.NaN) }), /^seenSince must be a valid Date/);
    await expectRefused(() => h.store.nodePrune({ olderThanMs: -1, limit: 10 }), /^olderThanMs must be/);
    await expectRefused(() => h.store.nodePrune({ olderThanMs: HOUR, limit: 0 }), /^limit must be/);
    expect(await h.store.nodeList()).toEqual(before);
  });
}
