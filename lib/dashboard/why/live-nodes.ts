import type { NodeRecord } from '../../store/index.js';

/**
 * How long a node may go unseen and still count as running: six beats at the default heartbeat
 * interval (10 s). A node that beats less often than every 60 s shows as silent in between.
 */
export const LIVE_WINDOW_MS = 60_000;

/** Whether a registry row is a running node, a node that went silent (likely died), or one that stopped. */
export function nodeStatus(node: NodeRecord, now: Date): 'running' | 'silent' | 'stopped' {
  if (node.stoppedAt) return 'stopped';
  return now.getTime() - node.lastSeenAt.getTime() <= LIVE_WINDOW_MS ? 'running' : 'silent';
}

/** The nodes that are running now. */
export function liveNodes(nodes: readonly NodeRecord[], now: Date): NodeRecord[] {
  return nodes.filter((node) => nodeStatus(node, now) === 'running');
}
