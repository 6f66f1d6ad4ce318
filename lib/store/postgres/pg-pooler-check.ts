import { StoreUnavailableError } from '../../core/index.js';
import { withPooledClient, type PgPool, type PgPooledClient } from './pg-executor.js';

/** How long the check waits for its second connection before it gives up and lets the boot go on. */
const SECOND_CONNECTION_WAIT_MS = 2_000;

const TRANSACTION_POOLER_MESSAGE =
  "The DataSource's connections go through a pooler in transaction mode (one connection's statements ran in two server sessions); give the store poolMode: 'transaction' (docs/operations.md#pgbouncer).";

const backendPid = async (client: PgPooledClient) => Number(((await client.query({ text: 'SELECT pg_backend_pid() AS pid' })).rows[0] as { pid: number }).pid);

/**
 * Refuses a pool whose connections go through a pooler in transaction mode when the store was not
 * told so (`poolMode`). Without it the store prepares statements and LISTENs on a session it does
 * not keep: prepared statements fail later, at load, and wake-ups are lost in silence. A session
 * keeps its server process between two statements. So connection A reads its server's pid, a
 * second connection holds a transaction open, and A reads its pid again: through a transaction
 * pooler A's next statement must then run on another server connection (PgBouncer also hands the
 * second connection the server connection A used last). Best effort: with a pool of one, or when
 * the pool has no second connection to give within {@link SECOND_CONNECTION_WAIT_MS}, it checks
 * nothing, and a pooler that hands out server connections in turn may pass it.
 */
export async function refuseTransactionPooler(pool: PgPool, poolSize: number): Promise<void> {
  if (poolSize < 2) return;
  const moved = await withPooledClient(pool, async (a) => {
    const first = await backendPid(a);
    const b = await connectWithin(pool, SECOND_CONNECTION_WAIT_MS);
    if (b === null) return false;
    let lost: Error | undefined;
    const onError = (error: Error) => void (lost ??= error);
    b.on('error', onError);
    try {
      await b.query({ text: 'BEGIN' });
      await b.query({ text: 'SELECT 1' });
      const second = await backendPid(a);
      await b.query({ text: 'ROLLBACK' });
      return first !== second;
    } finally {
      b.removeListener('error', onError);
      b.release(lost);
    }
  });
  if (moved) throw new StoreUnavailableError(TRANSACTION_POOLER_MESSAGE);
}

/** A second connection from `pool`, or null if none comes within `ms`; one that comes later goes back at once. */
function connectWithin(pool: PgPool, ms: number): Promise<PgPooledClient | null> {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => ((late = true), resolve(null)), ms);
    pool.connect().then(
      (client) => {
        clearTimeout(timer);
        if (late) client.release();
        else resolve(client);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!late) reject(error);
      },
    );
  });
}
