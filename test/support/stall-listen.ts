import type { DataSource } from 'typeorm';

type Client = { processID?: number; query: (...args: unknown[]) => Promise<unknown> };
type Pool = { connect: (...args: unknown[]) => unknown };

/**
 * Makes the next LISTEN sent through `dataSource`'s pool wait until the test calls `release()`,
 * like a proxy that delays LISTEN: the connection is checked out and idle on the server, and the
 * query has not come back. `held` resolves with that connection's backend pid once it waits.
 */
export function stallNextListen(dataSource: DataSource): { held: Promise<number>; release: () => void } {
  const pool = (dataSource.driver as unknown as { master: Pool }).master;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let signal!: (pid: number) => void;
  const held = new Promise<number>((resolve) => (signal = resolve));
  let armed = true;
  const connect = pool.connect.bind(pool);
  pool.connect = (...args: unknown[]) => {
    // TypeORM checks out with a callback; only the promise form (the store's) is wrapped.
    if (args.length > 0) return connect(...args);
    return (connect() as Promise<Client>).then((client) => {
      const query = client.query.bind(client);
      client.query = async (...queryArgs: unknown[]) => {
        const text = (queryArgs[0] as { text?: string })?.text ?? queryArgs[0];
        if (armed && typeof text === 'string' && text.startsWith('LISTEN')) {
          armed = false;
          client.query = query;
          signal(client.processID ?? 0);
          await gate;
        }
        return query(...queryArgs);
      };
      return client;
    });
  };
  return { held, release };
}
