import type { Clock } from '../core/index.js';

/** The process's wall clock, for shells that run in real time. */
export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }
}
