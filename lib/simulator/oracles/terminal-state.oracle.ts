import { isDeadLetterState } from '../../core/index.js';
import { PerCallOracle, TERMINAL, type CallEvent, type WriteEvent } from './oracle.js';

const REPLAYS = new Set(['jobReplay', 'scheduleReplay']);

/** A terminal job stays as it is, unless an operator replays or discards (cancels) a dead-lettered or quarantined one. */
export class TerminalStateOracle extends PerCallOracle {
  readonly name = 'terminal_state_stable';

  protected onCall(call: CallEvent, writes: readonly WriteEvent[]): void {
    for (const { before, after } of writes) {
      if (!before || !TERMINAL.has(before.state)) continue;
      if (after.state === before.state && after.attempt === before.attempt) continue;
      const operable = isDeadLetterState(before.state);
      const replay = REPLAYS.has(call.op) && operable && after.state === 'scheduled';
      const discard = call.op === 'jobCancel' && operable && after.state === 'cancelled' && after.attempt === before.attempt;
      if (!replay && !discard) this.flag(`${call.op} moved ${before.id} from ${before.state} (attempt ${before.attempt}) to ${after.state} (attempt ${after.attempt})`);
    }
  }
}
