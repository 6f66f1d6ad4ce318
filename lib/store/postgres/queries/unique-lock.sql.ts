import type { PostgresNaming } from '../postgres-naming.js';

/**
 * The lock behind unique keys. Every writer that can make a keyed job unfinished (an enqueue, a
 * replay) first takes a transaction advisory lock on its (wire name, key), so the one that comes
 * second waits until the first commits or rolls back, and then sees its job. The partial unique
 * index stays the guarantee underneath; the lock makes the second writer find the holder instead
 * of failing on the index.
 *
 * The lock is the two-key form: the first key is hashed from {@link uniqueLockSpace} (so two
 * schemas do not contend), the second from the (name, key) pair. A hash collision only makes two
 * unrelated keys take turns.
 */
export const uniqueLockSpace = (t: PostgresNaming) => `${t.lockKey}:unique`;

/** The states in which a job holds its unique key. */
export const HOLDING = `('scheduled', 'awaiting_parents', 'running')`;

/**
 * A job of alias `j` that takes its debounce key's enqueues: one that has not started. The partial
 * unique index jobs_debounce_idx has the same predicate, so a look-up by it reads that index.
 */
export const DEBOUNCE_HOLDER = `j.window_kind = 'debounce' AND j.state = 'scheduled' AND j.attempt = 0`;
