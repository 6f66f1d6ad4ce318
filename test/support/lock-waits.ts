import type { DataSource } from 'typeorm';

/** A promise the test opens by hand, to hold one side of an interleaving where it wants it. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * Resolves true once `count` backends (one by default) whose statement contains `fragment` wait on a lock, or false once
 * `done()` holds. It polls the server's own view, so it waits for the interleaving to exist instead
 * of guessing how long it takes; `done` lets code that never waits (the code before a fix) get past it.
 */
export async function untilWaiting(admin: DataSource, fragment: string, done: () => boolean, count = 1): Promise<boolean> {
  for (;;) {
    if (done()) return false;
    const [{ waiting }] = await admin.query(
      `SELECT count(*)::int AS waiting FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND position($1 in query) > 0`,
      [fragment],
    );
    if (waiting >= count) return true;
  }
}

/** The promise, and whether it has settled yet. */
export function tracked<T>(promise: Promise<T>) {
  const state = { done: false };
  void promise.then(
    () => (state.done = true),
    () => (state.done = true),
  );
  return { promise, isDone: () => state.done };
}
