/**
 * How much longer than `shutdownGraceMs` a node's stop may take. After the grace period the node
 * still waits for its last writes (hand-backs, outcomes being recorded, a claim in flight) and for
 * passes in flight (minting, observer delivery, maintenance); those take milliseconds on a
 * healthy database. When this much more time has passed the node stops anyway, logs what it gave
 * up on, and leaves those leases to lapse: shutdown never waits on a database or network that is
 * not answering.
 */
export const STOP_OVERRUN_MS = 5_000;
