import type { Rate } from '../../store/index.js';

/** A window's length exactly, in its largest whole unit: `1 min`, `90 s`, `1500 ms`. */
export function windowText(perMs: number): string {
  if (perMs % 3_600_000 === 0) return `${perMs / 3_600_000} h`;
  if (perMs % 60_000 === 0) return `${perMs / 60_000} min`;
  if (perMs % 1_000 === 0) return `${perMs / 1_000} s`;
  return `${perMs} ms`;
}

/** A rate as `5 starts per 1 min`. */
export function rateText(rate: Rate): string {
  return `${rate.max.toLocaleString('en-US')} ${rate.max === 1 ? 'start' : 'starts'} per ${windowText(rate.perMs)}`;
}
