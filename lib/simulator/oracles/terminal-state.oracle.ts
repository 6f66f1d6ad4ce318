import { PerCallOracle, TERMINAL, type CallEvent, type WriteEvent } from './oracle.js';

const REPLAYS = new Set(['jobReplay', 'scheduleReplay']);

/** A terminal job stays as it is, unless an operator replays a dead-lettered or quarantined one. */
export class TerminalStateOracle extends PerCallOracle {
  readonly name = 'terminal_state_stable';

  protected onCall(call: CallEvent, writes: readonly WriteEvent[]): void {
    for (const { before, after } of writes) {
      if (!before || !TERMINAL.has(before.state)) continue;
      if (after.state === before.state && after.attempt === before.attempt) continue;
      const replay = REPLAYS.has(call.op) && (before.state === 'dead_lettered' || before.state === 'quarantined') && after.state === 'scheduled';
      if (!replay) this.flag(`${call.op} moved ${before.id} from ${before.state} (attempt ${before.attempt}) to ${after.state} (attempt ${after.attempt})`);
    }
  }
}
