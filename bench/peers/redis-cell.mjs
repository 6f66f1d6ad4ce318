// A cell on Redis: the same shape as a PostgreSQL cell (peers/cell.mjs), on a database index of its
// own. A cell takes an index that is empty when it starts and FLUSHDBs it when it ends: never
// FLUSHALL, never an index that holds someone else's keys. Counters with no Redis meaning (commits,
// WAL, dead tuples) are null, which the tables show as a dash.
import Redis from 'ioredis';

const info = async (redis, section) =>
  Object.fromEntries(
    (await redis.info(section))
      .split('\r\n')
      .filter((line) => line.includes(':'))
      .map((line) => line.split(':')),
  );

export class RedisServer {
  /** REDIS_URL, or the machine's Redis at 127.0.0.1:6379. */
  constructor(url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') {
    this.url = url;
    this.admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    this.admin.on('error', () => {});
    this.next = 1; // index 0 is every client's default: left to them
  }

  /** Version and persistence: with `save` empty and appendonly off, Redis keeps nothing on disk. */
  async describe() {
    const server = await info(this.admin, 'server');
    const [, save] = await this.admin.config('GET', 'save');
    const [, appendonly] = await this.admin.config('GET', 'appendonly');
    return { version: server.redis_version, url: this.url.replace(/\/\/[^@]*@/, '//'), save, appendonly, keepsNothingOnDisk: save === '' && appendonly === 'no' };
  }

  urlOf(db) {
    const u = new URL(this.url);
    u.pathname = `/${db}`;
    return u.toString();
  }

  /** Server CPU (user + system, every thread) in ms, as Redis reports it: the same from any machine. */
  async cpuMs() {
    const cpu = await info(this.admin, 'cpu');
    return (Number(cpu.used_cpu_user) + Number(cpu.used_cpu_sys)) * 1_000;
  }

  async usedMemory() {
    return Number((await info(this.admin, 'memory')).used_memory);
  }

  /** Picks the next empty database index (round robin over 1..databases-1) for one cell. */
  async pick() {
    const [, count] = await this.admin.config('GET', 'databases').catch(() => [null, '16']);
    const databases = Number(count) || 16;
    for (let tried = 0; tried < databases - 1; tried++) {
      const db = this.next;
      this.next = (this.next % (databases - 1)) + 1;
      await this.admin.select(db);
      if ((await this.admin.dbsize()) === 0) return db;
    }
    throw new Error(`no empty Redis database index on ${this.url}: every one of 1..${databases - 1} holds keys`);
  }

  async database(system) {
    const db = await this.pick();
    const url = this.urlOf(db);
    const memory0 = await this.usedMemory();
    const probe = await system.probe(url);
    let polls = 0;
    return {
      name: `redis db ${db}`,
      url,
      remaining: async () => {
        polls += 1;
        return probe.remaining();
      },
      polls: () => polls,
      analyze: async () => {},
      settle: async () => true,
      idle: async () => true,
      serverCpuMs: () => this.cpuMs(),
      counters: async () => ({ commits: null, wal: null, fpi: null, checkpoints: null }),
      // No tables: the growth of used_memory over the cell (server-wide, as WAL is) stands in for their size.
      tables: async () => ({ dead: null, bytes: (await this.usedMemory()) - memory0 }),
      drop: async () => {
        await probe.close();
        await this.admin.select(db);
        await this.admin.flushdb();
      },
    };
  }

  close() {
    this.admin.disconnect();
  }
}
