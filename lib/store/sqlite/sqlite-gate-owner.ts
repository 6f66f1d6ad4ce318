/** Who holds the connection: the scheduler (its operations and attempt transactions) or host code. */
export interface GateOwner {
  readonly kind: 'scheduler' | 'host';
}

/**
 * An attempt's owner. Its transaction opens lazily: the gate begins it on the attempt's first query
 * or transaction, and the attempt ends it with `SqliteGate.endAttempt`.
 */
export class AttemptOwner implements GateOwner {
  readonly kind = 'scheduler' as const;
  /** The BEGIN under way or done, shared by every statement that asks for it; null until the first. */
  opening: Promise<void> | null = null;
  /** True once BEGIN IMMEDIATE succeeded: the attempt holds the file's write lock. */
  open = false;
  ended = false;
}
