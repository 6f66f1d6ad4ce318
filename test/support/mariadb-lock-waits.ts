import type { DataSource } from 'typeorm';

/**
 * The transactions that wait on a lock right now, each as InnoDB describes it: its statement and
 * the lock it waits for (which names the table, e.g. `test`.`t_jobs`). Read from SHOW ENGINE INNODB
 * STATUS, which is written when asked: information_schema.innodb_trx is a cache that the server
 * refreshes only after 100 ms without a reader, so a test that polls it never sees a new wait.
 * The part before TRANSACTIONS (the latest deadlock) is history, and left out.
 */
async function waitingTransactions(admin: DataSource): Promise<string[]> {
  const [row] = (await admin.query('SHOW ENGINE INNODB STATUS')) as { Status: string }[];
  const live = row!.Status.split(/\nTRANSACTIONS\n-+\n/)[1] ?? '';
  return live.split(/\n---TRANSACTION /).filter((block) => block.includes('FOR THIS LOCK TO BE GRANTED'));
}

/**
 * Resolves true once a transaction waits on a lock and InnoDB's description of it contains
 * `fragment` (a quoted table name such as store.naming.jobs names the table it waits on), or false
 * once `done()` holds. It polls the server's own view, so a test waits for the interleaving to
 * exist instead of guessing how long it takes; `done` lets code that never waits get past it.
 * MariaDB's counterpart of lock-waits.ts.
 */
export async function untilLockWait(admin: DataSource, fragment: string, done: () => boolean): Promise<boolean> {
  for (;;) {
    if (done()) return false;
    if ((await waitingTransactions(admin)).some((block) => block.includes(fragment))) return true;
  }
}

/** How many transactions wait on a lock whose description contains `fragment`. */
export async function lockWaiters(admin: DataSource, fragment: string): Promise<number> {
  return (await waitingTransactions(admin)).filter((block) => block.includes(fragment)).length;
}
