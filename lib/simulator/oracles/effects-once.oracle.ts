import type { SimEvent } from '../sim-event.js';
import { Oracle, TERMINAL, type CallEvent, type WriteEvent } from './oracle.js';

/**
 * The effects that ride on a write are applied exactly once, in the call that caused them:
 * - log: each change of state or attempt appends one history entry, and no entry appears without one;
 *   an attempt that ends other than by success logs the error that ended it, even a repeated one;
 * - latch: each dependency edge settles once, and only once its parent is terminal; each lowering
 *   of a child's latch is paid for by one settled edge;
 * - slot: a claimed job holds its slots exactly while it runs, taken once and given back once.
 */
export class EffectsOnceOracle extends Oracle {
  readonly name = 'effects_once';
  private readonly state = new Map<string, string>();
  private readonly settled = new Set<string>();
  private readonly held = new Set<string>();
  private writes: WriteEvent[] = [];
  private logs: string[] = [];
  private logErrors = new Map<string, string | null>();
  private edgesByChild = new Map<string, number>();
  private releasedWhileRunning: string[] = [];

  onEvent(event: SimEvent): void {
    switch (event.type) {
      case 'write':
        this.writes.push(event);
        this.state.set(event.after.id, event.after.state);
        break;
      case 'log':
        this.logs.push(`${event.jobId}:${event.state}:${event.attempt}`);
        this.logErrors.set(`${event.jobId}:${event.state}:${event.attempt}`, event.error);
        break;
      case 'edge': {
        const key = `${event.parentId}>${event.childId}`;
        if (this.settled.has(key)) this.flag(`edge ${key} settled twice`);
        this.settled.add(key);
        const parentState = this.state.get(event.parentId);
        if (!parentState || !TERMINAL.has(parentState)) this.flag(`edge ${key} settled while its parent was ${parentState ?? 'unknown'}`);
        this.edgesByChild.set(event.childId, (this.edgesByChild.get(event.childId) ?? 0) + 1);
        break;
      }
      case 'slot':
        if (event.op === 'take') {
          const last = this.writes.findLast((w) => w.after.id === event.jobId);
          if (this.held.has(event.jobId) && last?.before?.state !== 'running') this.flag(`slot of ${event.jobId} taken twice`);
          this.held.add(event.jobId);
        } else {
          if (!this.held.delete(event.jobId)) this.flag(`slot of ${event.jobId} released without being held`);
          this.releasedWhileRunning.push(event.jobId);
        }
        break;
      case 'call':
        this.closeCall(event);
        break;
    }
  }

  private closeCall(call: CallEvent): void {
    const expected = this.writes
      .filter(({ before, after }) => !before || before.state !== after.state || before.attempt !== after.attempt)
      .map(({ after }) => `${after.id}:${after.state}:${after.attempt}`)
      .sort();
    const actual = [...this.logs].sort();
    if (expected.join() !== actual.join()) this.flag(`${call.op} wrote history [${actual.join(' ')}] for transitions [${expected.join(' ')}]`);
    for (const { before, after } of this.writes) {
      if (before?.state !== 'running' || after.state === 'succeeded' || (before.state === after.state && before.attempt === after.attempt)) continue;
      const key = `${after.id}:${after.state}:${after.attempt}`;
      const logged = this.logErrors.get(key);
      if (logged !== undefined && logged !== after.lastError) this.flag(`${call.op} logged ${key} with error ${JSON.stringify(logged)}, not the ${JSON.stringify(after.lastError)} that ended the attempt`);
    }

    const lowered = new Map<string, number>();
    for (const { before, after } of this.writes) {
      if (before && after.pendingParents < before.pendingParents) lowered.set(after.id, (lowered.get(after.id) ?? 0) + before.pendingParents - after.pendingParents);
    }
    for (const [child, count] of lowered) {
      if (count > (this.edgesByChild.get(child) ?? 0)) this.flag(`${call.op} lowered the latch of ${child} by ${count} with ${this.edgesByChild.get(child) ?? 0} settled edge(s)`);
    }
    for (const id of this.releasedWhileRunning) if (this.state.get(id) === 'running') this.flag(`${call.op} gave back the slot of ${id} while it still runs`);
    for (const { before, after } of this.writes) {
      if (before?.state === 'running' && after.state !== 'running' && this.held.has(after.id)) this.flag(`${call.op} ended ${after.id} without giving back its slot`);
      if (after.state === 'running' && before?.state !== 'running' && !this.held.has(after.id)) this.flag(`${call.op} started ${after.id} without taking its slot`);
    }
    this.writes = [];
    this.logs = [];
    this.logErrors = new Map();
    this.edgesByChild = new Map();
    this.releasedWhileRunning = [];
  }
}
