/**
 * The oldest transaction that may still be open. An entry it or a later transaction writes can
 * still commit behind a position already handed out, so observers are fed only entries older.
 */
export const DELIVERY_HORIZON = 'pg_snapshot_xmin(pg_current_snapshot())';

/**
 * The entries of the history aliased `h` that an observer at the position (`tx`, `id`) is fed
 * next: after it in (tx, id) order, the history key's order, and written by finished
 * transactions. One predicate for what an observer reads and for what an operator is told it has
 * not read yet, so the two always agree.
 */
export function deliverableAfter(h: string, tx: string, id: string): string {
  return `(${h}.tx, ${h}.id) > (${tx}, ${id}) AND ${h}.tx < ${DELIVERY_HORIZON}`;
}
