import type { DriverNodeBeatParams } from '../checked/store-driver.js';
import type { NodeRecord } from '../job-store.types.js';
import type { MemoryNode, MemoryState } from './memory-tables.js';

/** Registry order: most recently seen first, ties by id descending (as the SQL stores read their index backwards). */
function bySeenDescending(a: MemoryNode, b: MemoryNode): number {
  return b.lastSeenAt - a.lastSeenAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

function toRecord(node: MemoryNode): NodeRecord {
  return {
    ...node,
    queues: [...node.queues],
    startedAt: new Date(node.startedAt),
    lastSeenAt: new Date(node.lastSeenAt),
    stoppedAt: node.stoppedAt === null ? null : new Date(node.stoppedAt),
  };
}

/** The node registry: beats, stops, the listing and the prune. */
export class MemoryNodes {
  constructor(private readonly state: MemoryState) {}

  beat(params: DriverNodeBeatParams): void {
    const { nodes } = this.state.tables;
    const now = this.state.clock.now();
    const known = nodes.get(params.id);
    const startedAt = known === undefined || known.stoppedAt !== null ? now : known.startedAt;
    nodes.set(params.id, { ...params, queues: [...params.queues], startedAt, lastSeenAt: now, stoppedAt: null, finish: this.state.finish });
  }

  stop({ id }: { readonly id: string }): void {
    const { nodes } = this.state.tables;
    const known = nodes.get(id);
    if (known === undefined || known.stoppedAt !== null) return;
    const now = this.state.clock.now();
    nodes.set(id, { ...known, running: 0, lastSeenAt: now, stoppedAt: now });
  }

  list({ seenSince, limit }: { readonly seenSince: Date | null; readonly limit: number }): NodeRecord[] {
    const since = seenSince?.getTime() ?? Number.NEGATIVE_INFINITY;
    return [...this.state.tables.nodes.values()]
      .filter((node) => node.lastSeenAt >= since)
      .sort(bySeenDescending)
      .slice(0, limit)
      .map(toRecord);
  }

  prune({ olderThanMs, limit }: { readonly olderThanMs: number; readonly limit: number }): number {
    const { nodes } = this.state.tables;
    const cutoff = this.state.clock.now() - olderThanMs;
    const doomed = [...nodes.values()]
      .filter((node) => node.lastSeenAt < cutoff)
      .sort((a, b) => -bySeenDescending(a, b))
      .slice(0, limit);
    for (const node of doomed) nodes.delete(node.id);
    return doomed.length;
  }
}
