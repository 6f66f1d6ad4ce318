import type { NodeRecord } from '../../store/index.js';
import { liveNodes } from '../why/live-nodes.js';

/** What becomes of a job that succeeds, as the running nodes' registry rows say it. */
export interface KeptReport {
  /** The running nodes among those read. */
  readonly running: number;
  /** Those whose store runs the lean finish (`NodeRecord.finish`). */
  readonly lean: number;
  /** The same in one sentence: the dashboard's overview and queue pages and the CLI's `stats` show it. */
  readonly sentence: string;
}

/**
 * What becomes of a job that succeeds, from the finish mode each running node's registry row
 * records. A node of a release before the lean finish records none, and keeps its jobs.
 */
export function whatIsKept(nodes: readonly NodeRecord[], now: Date): KeptReport {
  const running = liveNodes(nodes, now);
  const lean = running.filter((node) => node.finish === 'lean').length;
  return { running: running.length, lean, sentence: sentence(running.length, lean) };
}

function sentence(running: number, lean: number): string {
  if (running === 0) return 'No node is running, so none says what becomes of a job that succeeds.';
  if (lean === 0) return 'A job that succeeds is kept, with its history, until retention deletes it (finish: keep on every running node).';
  const where = lean === running ? 'every running node' : `${lean} of ${running} running nodes; the others keep theirs`;
  return (
    'A job that succeeds without output, dependants, unique key or an observer that needs it is deleted at once, with its history, ' +
    `so it is in no count or chart (finish: lean on ${where}).`
  );
}
