import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import {
  InvalidArgumentError,
  InvalidIdentifierError,
  Job,
  MysqlJobStore,
  SchedulerClient,
  SchedulerError,
  SchedulerModule,
  StoreUnavailableError,
  type JobStore,
} from '../../lib/index.js';
import { ACCEPTANCES, BAD_MODULE_OPTIONS, BAD_NAMING, boot, ODD_PAYLOADS, REFUSALS, STORE_LIMITS } from '../bad-input/bad-input.cases.js';
import { expectTypedRefusal, HOSTILE, thrown, type ErrorClass } from '../bad-input/hostile.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

/*
 * The bad-input catalogue (bad-input.cases.ts) on the MySQL store, then MySQL's own traps. The
 * shared runner, badInputCases, knows the memory, SQLite and PostgreSQL stores by name and branches
 * on them where their answers differ, so the catalogue's tables are driven here by a runner of the
 * same shape with MySQL's answers: `schema` names the database, and the PostgreSQL-only options are
 * refused on a MySQL DataSource. The fixture jobs and the seed are the shared runner's.
 */

const UNKNOWN_ID = '0190a5a0-0000-7000-8000-00000000dead';
const TENANT_KEY = 'tenant:seed';

/** Decorators applied by hand with loose types: the wire names here are not in any JobRegistry. */
const job = (options: object) => Job(options as never) as unknown as ClassDecorator;

@job({ name: 'orders.confirm' })
class OrdersConfirmJob {
  handle() {}
}

@job({ name: HOSTILE.dotted })
class DottedNameJob {
  handle() {}
}

@job({ name: HOSTILE.long })
class LongNameJob {
  handle() {}
}

@job({ name: 'keyed.job', concurrencyKey: (payload: { key: unknown }) => payload.key, concurrencyLimit: 2 })
class KeyedJob {
  handle() {}
}

@job({
  name: 'key.throws',
  concurrencyKey: (payload: unknown) => {
    throw new Error(`cannot key ${JSON.stringify(payload)}.\nSecond line.`);
  },
})
class ThrowingKeyJob {
  handle() {}
}

@job({
  name: 'key.hostile',
  concurrencyKey: () => {
    throw new Proxy(new Error('hidden'), new Proxy({}, { get: () => () => { throw new Error('trapped'); } }));
  },
})
class HostileKeyJob {
  handle() {}
}

const PROVIDERS = [OrdersConfirmJob, DottedNameJob, LongNameJob, KeyedJob, ThrowingKeyJob, HostileKeyJob];

type Loose<T> = { [K in keyof T]: T[K] extends (...args: never[]) => unknown ? (...args: any[]) => Promise<any> : T[K] };
type Client = Loose<SchedulerClient>;

interface Seed {
  readonly scheduled: string;
  readonly deadLettered: string;
  readonly succeeded: string;
  readonly waiting: string;
  readonly schedule: string;
}

/** The shared runner's seed: a job in each state the catalogue refers to, a schedule, a paused queue and a limit. */
async function seed(client: Client, store: JobStore): Promise<Seed> {
  const { id: scheduled } = await client.enqueue('orders.confirm', { seed: 1 });
  const { id: deadLettered } = await client.enqueue('orders.confirm', { seed: 2 }, { queue: 'seed' });
  const [claimed] = await store.jobClaim({ workerId: 'seed', limit: 1, queues: ['seed'], leaseMs: 60_000 });
  await store.jobCompleteMany({ workerId: 'seed', outcomes: [{ jobId: claimed!.id, attempt: claimed!.attempt, kind: 'dead_lettered', error: 'seeded' }] });
  const { id: succeeded } = await client.enqueue('orders.confirm', { seed: 5 }, { queue: 'seed' });
  const [ran] = await store.jobClaim({ workerId: 'seed', limit: 1, queues: ['seed'], leaseMs: 60_000 });
  await store.jobCompleteMany({ workerId: 'seed', outcomes: [{ jobId: ran!.id, attempt: ran!.attempt, kind: 'succeeded' }] });
  const { id: waiting } = await client.enqueue('orders.confirm', { seed: 3 }, { dependsOn: [scheduled], concurrencyKey: TENANT_KEY, concurrencyLimit: 3 });
  const { id: scheduleId } = await client.schedule({ name: 'orders.confirm', everyMs: 60_000, payload: { seed: 4 } });
  await client.pause('paused');
  await client.setConcurrencyLimit({ queue: 'default' }, 7);
  return { scheduled, deadLettered, succeeded, waiting, schedule: scheduleId };
}

/** The error class a refusal expects on this store. */
function expected(error: ErrorClass | ((store: JobStore) => ErrorClass), store: JobStore): ErrorClass {
  return typeof error === 'function' && !(error.prototype instanceof Error) ? (error as (s: JobStore) => ErrorClass)(store) : (error as ErrorClass);
}

/** Rows as comparable data: the VARBINARY keys (Buffers through the DataSource) as the text they hold. */
const plainRow = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('utf8') : v]));

let dataSource: DataSource;
const stores: MysqlJobStore[] = [];

beforeAll(async () => {
  dataSource = await openMariadbDataSource({ poolSize: 6 });
});

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  for (const store of stores) await dropInstallation(dataSource, store.naming);
  await dataSource.destroy();
});

/** A migrated store on tables of its own, closed and dropped after the file. */
async function openStore(options: Omit<ConstructorParameters<typeof MysqlJobStore>[0], 'dataSource'> = {}): Promise<MysqlJobStore> {
  const store = new MysqlJobStore({ dataSource, tablePrefix: uniquePrefix('bad'), poolSize: 3, ...options });
  stores.push(store);
  await store.migrate();
  return store;
}

/** Tables whose names start with `prefix`, in the DataSource's database. */
const tablesLike = async (prefix: string) =>
  (
    (await dataSource.query(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE CONCAT(REPLACE(?, '_', '\\\\_'), '%') ORDER BY 1`, [
      prefix,
    ])) as { name: string }[]
  ).map((t) => t.name);

describe('bad input on MySQL (MariaDB)', () => {
  let store: MysqlJobStore;
  let app: INestApplicationContext;
  const ctx = {} as { client: Client; store: JobStore; seed: Seed };

  /** This installation's tables, plus anything a refused boot could have made: a database named after a hostile value, or tables with the never-created prefix. */
  const tables = async () => {
    const rows = (await dataSource.query(
      `SELECT CONCAT(table_schema, '.', table_name) AS name FROM information_schema.tables
        WHERE (table_schema = DATABASE() AND (table_name LIKE CONCAT(REPLACE(?, '_', '\\\\_'), '%') OR table_name LIKE 'never\\_created\\_%'))
           OR table_schema IN (?)
        ORDER BY 1`,
      [store.naming.prefix, Object.values(HOSTILE)],
    )) as { name: string }[];
    return rows.map((t) => t.name);
  };
  /** Every row of every table of the installation. */
  const snapshot = async () => {
    const rows: Record<string, unknown> = {};
    for (const name of await tablesLike(store.naming.prefix)) {
      const read = ((await dataSource.query(`SELECT * FROM \`${name}\``)) as Record<string, unknown>[]).map(plainRow);
      rows[name] = read.map((row) => JSON.stringify(row)).sort();
    }
    return rows;
  };

  beforeAll(async () => {
    store = await openStore({ limits: STORE_LIMITS });
    const moduleRef = await Test.createTestingModule({
      imports: [SchedulerModule.forRoot({ store, autoStart: false, queues: ['default', HOSTILE.dotted] })],
      providers: PROVIDERS,
    }).compile();
    app = await moduleRef.init();
    ctx.client = app.get(SchedulerClient) as unknown as Client;
    ctx.store = store;
    ctx.seed = await seed(ctx.client, store);
  });

  afterAll(async () => {
    await app?.close();
  });

  describe('refused with a typed error, one sentence, and every table unchanged', () => {
    it.each(REFUSALS.map((r) => [r.entry, r.label, r] as const))('%s: %s', async (_entry, _label, refusal) => {
      const before = await snapshot();
      const error = await thrown(() => refusal.call(ctx));
      expectTypedRefusal(error, expected(refusal.error, ctx.store), refusal.field);
      expect(await snapshot()).toEqual(before);
    });
  });

  describe('accepted, stored and read back byte for byte', () => {
    it.each(ACCEPTANCES.map((a) => [a.entry, a.name, a] as const))('%s: the %s identifier', async (_entry, name, acceptance) => {
      const value = HOSTILE[name];
      expect(await acceptance.run(ctx)).toBe(value);
      // The raw rows hold the exact text: it went in as a bound parameter, not as SQL.
      expect(JSON.stringify(await snapshot())).toContain(JSON.stringify(JSON.stringify(value).slice(1, -1)).slice(1, -1));
      expect(await ctx.client.get(ctx.seed.scheduled)).toMatchObject({ state: 'scheduled', payload: { seed: 1 } });
    });

    it.each(ODD_PAYLOADS)('a payload with %s', async (_label, payload) => {
      const { id } = await ctx.client.enqueue('orders.confirm', payload);
      expect((await ctx.client.get(id))!.payload).toEqual(payload);
      const { id: scheduleId } = await ctx.client.schedule({ name: 'orders.confirm', everyMs: 60_000, payload });
      expect((await ctx.client.getSchedule(scheduleId))!.payload).toEqual(payload);
    });

    it('error text PostgreSQL cannot hold is repaired the same way in every store, so a failure is always recorded', async () => {
      const { id } = await ctx.client.enqueue('orders.confirm', { n: 'error-text' }, { queue: 'errors', maxAttempts: 1 });
      const [claimed] = await ctx.store.jobClaim({ workerId: 'w', limit: 1, queues: ['errors'], leaseMs: 60_000 });
      expect(claimed?.id).toBe(id);
      const results = await ctx.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error: "Error: a\u0000b \ud800 o'brien", retryDelayMs: 0 }] });
      expect(results).toEqual([{ jobId: id, attempt: 1, status: 'applied', state: 'dead_lettered' }]);
      expect((await ctx.client.get(id))!.lastError).toBe("Error: a\ufffdb \ufffd o'brien");
      expect((await ctx.client.history(id)).at(-1)).toMatchObject({ state: 'dead_lettered', error: "Error: a\ufffdb \ufffd o'brien" });
    });

    it('unknown ids that are well-formed read as absent, and removing one changes nothing', async () => {
      const before = await snapshot();
      expect(await ctx.client.get(UNKNOWN_ID)).toBeNull();
      expect(await ctx.client.getSchedule(UNKNOWN_ID)).toBeNull();
      expect(await ctx.client.history(UNKNOWN_ID)).toEqual([]);
      expect(await ctx.client.removeSchedule(UNKNOWN_ID)).toBe(false);
      expect(await snapshot()).toEqual(before);
    });
  });

  describe('module options refused at boot, before anything is written', () => {
    it.each(BAD_MODULE_OPTIONS)('%s, on this store', async (_label, options, field) => {
      const before = await snapshot();
      expectTypedRefusal(await thrown(() => boot({ store, ...options })), InvalidArgumentError, field);
      expect(await snapshot()).toEqual(before);
    });

    it.each(BAD_MODULE_OPTIONS)('%s, through forRootAsync', async (_label, options, field) => {
      const before = await snapshot();
      expectTypedRefusal(await thrown(() => boot({ store, ...options }, 'async')), InvalidArgumentError, field);
      expect(await snapshot()).toEqual(before);
    });

    // On MySQL `schema` names the database that holds the tables: refused as PostgreSQL refuses a schema.
    it.each(BAD_NAMING)('%s', async (_label, options) => {
      const before = { tables: await tables(), rows: await snapshot() };
      const error = await thrown(() => boot({ dataSource, ...options }));
      const naming = 'schema' in options || 'tablePrefix' in options;
      expectTypedRefusal(error, naming ? InvalidIdentifierError : InvalidArgumentError, naming ? /^(schema|tablePrefix) must be a lower-case SQL identifier/ : /^limits\./);
      expect({ tables: await tables(), rows: await snapshot() }).toEqual(before);
    });

    it('a bad worker option stops a boot on a fresh database before any table is created', async () => {
      const before = await tables();
      const fresh = { dataSource, tablePrefix: 'never_created_' };
      expectTypedRefusal(await thrown(() => boot({ ...fresh, concurrency: 0 })), InvalidArgumentError, /^concurrency must be/);
      expectTypedRefusal(await thrown(() => boot({ ...fresh, queueLimits: { "o'brien": 1 } })), InvalidArgumentError, /^queueLimits key/);
      expect(await tables()).toEqual(before);
    });

    it.each([
      ['asyncClaimCommit', { asyncClaimCommit: true }],
      ['poolMode', { poolMode: 'transaction' as const }],
      ['preparedStatements', { preparedStatements: false }],
      ['listenUrl', { listenUrl: 'postgres://db/x' }],
    ])('%s on a DataSource the module builds a MySQL store on is refused', async (option, options) => {
      const before = { tables: await tables(), rows: await snapshot() };
      expectTypedRefusal(await thrown(() => boot({ dataSource, tablePrefix: 'never_created_', ...options })), InvalidArgumentError, new RegExp(`^${option} only applies to PostgreSQL; leave it unset on MySQL and MariaDB\\.$`));
      expect({ tables: await tables(), rows: await snapshot() }).toEqual(before);
    });

    it('a useFactory that returns nothing is refused with a typed error', async () => {
      const error = await thrown(async () => {
        const moduleRef = await Test.createTestingModule({ imports: [SchedulerModule.forRootAsync({ useFactory: () => null as never })] }).compile();
        await moduleRef.close();
      });
      expectTypedRefusal(error, InvalidArgumentError, /^SchedulerModule options must be an object, got null\.$/);
    });
  });
});

describe("MySQL's own traps (MariaDB)", () => {
  it("refuses at migrate a DataSource whose charset is utf8_general_ci, naming the charset option, before anything is written", async () => {
    const narrow = await openMariadbDataSource({ charset: 'utf8_general_ci' });
    try {
      const prefix = uniquePrefix('narrow');
      const store = new MysqlJobStore({ dataSource: narrow, tablePrefix: prefix, poolSize: 1 });
      stores.push(store);
      expectTypedRefusal(await thrown(() => store.migrate()), StoreUnavailableError, /character set "utf8(mb3)?".*set its charset option to 'utf8mb4'/);
      // Through the module too: the boot migrates, and stops there.
      expectTypedRefusal(await thrown(() => boot({ dataSource: narrow, tablePrefix: prefix })), StoreUnavailableError, /charset option/);
      expect(await tablesLike(prefix)).toEqual([]);
    } finally {
      await narrow.destroy();
    }
  });

  it('keeps 4-byte characters (emoji, astral CJK) exactly in payloads, unique keys, concurrency keys, rate keys, errors, outputs and schedules, through its own transactions and the host\'s', async () => {
    const store = await openStore();
    const payload = { '🚀': '𠜎 漢字 😀', nested: ['🧪', { '𠀋': '👩‍💻' }] };
    const uniqueKey = '键🔑𠀋';
    const concurrencyKey = '租户🚀𠀋';
    const { id } = await store.jobEnqueue({ job: { name: 'astral', payload, uniqueKey, concurrencyKey, concurrencyLimit: 2, maxAttempts: 2, queue: 'astral' } });
    const hosted = await dataSource.transaction((manager) => store.jobEnqueue({ job: { name: 'astral', payload: { host: '🏠𠜎' }, queue: 'astral-host' }, manager }));
    expect(await store.jobGet({ jobId: hosted.id })).toMatchObject({ payload: { host: '🏠𠜎' } });
    // The key matches byte for byte: the second enqueue of it finds the first job.
    expect(await store.jobEnqueue({ job: { name: 'astral', payload: 2, uniqueKey } })).toEqual({ id, created: false, deduplicated: 'kept' });
    expect(await store.jobGet({ jobId: id })).toMatchObject({ payload, uniqueKey, concurrencyKey });
    expect(await store.concurrencyLimitList()).toContainEqual({ key: concurrencyKey, max: 2 });
    await store.rateLimitSet({ target: { key: '🚦𠀋' }, rate: { max: 3, perMs: 60_000 } });
    expect(await store.rateLimitList()).toContainEqual({ key: '🚦𠀋', max: 3, perMs: 60_000 });

    const error = 'Error: 💥 boom in 𠜎 (漢字)';
    const [first] = await store.jobClaim({ workerId: 'w🚀', limit: 1, queues: ['astral'], leaseMs: 60_000 });
    expect(first?.id).toBe(id);
    await store.jobCompleteMany({ workerId: 'w🚀', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error, retryDelayMs: 0 }] });
    expect((await store.jobGet({ jobId: id }))?.lastError).toBe(error);
    const output = { '結果': '✅🎉', '𠜎': ['😀'] };
    const [second] = await store.jobClaim({ workerId: 'w🚀', limit: 1, queues: ['astral'], leaseMs: 60_000 });
    expect(await store.jobCompleteMany({ workerId: 'w🚀', outcomes: [{ jobId: id, attempt: second!.attempt, kind: 'succeeded', output }] })).toMatchObject([{ status: 'applied' }]);
    expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'succeeded', output, workerId: 'w🚀' });
    expect((await store.jobHistory({ jobId: id })).map((entry) => entry.error).filter(Boolean)).toEqual([error]);

    const { schedule } = await store.scheduleUpsert({ schedule: { name: 'astral.tick', everyMs: 60_000, payload } });
    expect((await store.scheduleGet({ scheduleId: schedule.id }))?.payload).toEqual(payload);
  });

  it("keeps 'tenant' and 'tenant ' (a trailing space) apart: two unique keys, two concurrency limits and two rate limits", async () => {
    const store = await openStore();
    const plain = await store.jobEnqueue({ job: { name: 'spaced', payload: 1, uniqueKey: 'tenant', delayMs: 60_000 } });
    const spaced = await store.jobEnqueue({ job: { name: 'spaced', payload: 2, uniqueKey: 'tenant ', delayMs: 60_000 } });
    expect([plain.created, spaced.created]).toEqual([true, true]);
    expect(spaced.id).not.toBe(plain.id);
    expect(await store.jobEnqueue({ job: { name: 'spaced', payload: 3, uniqueKey: 'tenant ' } })).toEqual({ id: spaced.id, created: false, deduplicated: 'kept' });
    expect((await store.jobGet({ jobId: spaced.id }))?.uniqueKey).toBe('tenant ');

    // Concurrency: 'tenant' lets one run, 'tenant ' two; three of each wait.
    await store.concurrencyLimitSet({ target: { key: 'tenant' }, max: 1 });
    await store.concurrencyLimitSet({ target: { key: 'tenant ' }, max: 2 });
    expect((await store.concurrencyLimitList()).filter((l) => 'key' in l && l.key.startsWith('tenant'))).toEqual([
      { key: 'tenant', max: 1 },
      { key: 'tenant ', max: 2 },
    ]);
    const keys = ['tenant', 'tenant ', 'tenant', 'tenant ', 'tenant', 'tenant '];
    await store.jobEnqueueMany({ jobs: keys.map((concurrencyKey, i) => ({ name: 'capped', payload: i, queue: 'capped', concurrencyKey })) });
    const capped = await store.jobClaim({ workerId: 'w', limit: 6, queues: ['capped'], leaseMs: 60_000 });
    expect(capped.map((j) => j.concurrencyKey).sort()).toEqual(['tenant', 'tenant ', 'tenant ']);

    // Rate: 'quota' lets one start a minute, 'quota ' two.
    await store.rateLimitSet({ target: { key: 'quota' }, rate: { max: 1, perMs: 60_000 } });
    await store.rateLimitSet({ target: { key: 'quota ' }, rate: { max: 2, perMs: 60_000 } });
    expect((await store.rateLimitList()).filter((l) => 'key' in l && l.key.startsWith('quota'))).toEqual([
      { key: 'quota', max: 1, perMs: 60_000 },
      { key: 'quota ', max: 2, perMs: 60_000 },
    ]);
    await store.jobEnqueueMany({ jobs: keys.map((key, i) => ({ name: 'rated', payload: i, queue: 'rated', concurrencyKey: key.replace('tenant', 'quota') })) });
    const rated = await store.jobClaim({ workerId: 'w', limit: 6, queues: ['rated'], leaseMs: 60_000 });
    expect(rated.map((j) => j.concurrencyKey).sort()).toEqual(['quota', 'quota ', 'quota ']);
  });

  it.each([
    ['maxNameLength', 256, 255, 'VARCHAR\\(255\\)'],
    ['maxErrorBytes', 16_777_216, 16_777_215, 'MEDIUMTEXT'],
    ['maxProgressBytes', 65_536, 65_535, 'TEXT'],
  ] as const)('refuses limits.%s of %d, wider than its column, when the store is built; %d is accepted', async (key, wide, ceiling, column) => {
    const refused = await thrown(() => new MysqlJobStore({ dataSource, tablePrefix: 'never_created_', limits: { [key]: wide } }));
    expectTypedRefusal(refused, InvalidArgumentError, new RegExp(`^limits\\.${key} must be at most ${ceiling} on the MySQL store, whose column for it is ${column}, got ${wide}\\.$`));
    expect((refused as SchedulerError & { argument?: string }).argument).toBe(`limits.${key}`);
    expectTypedRefusal(await thrown(() => boot({ dataSource, tablePrefix: 'never_created_', limits: { [key]: wide } })), InvalidArgumentError, new RegExp(`^limits\\.${key} must be at most`));
    expect(new MysqlJobStore({ dataSource, tablePrefix: 'never_created_', limits: { [key]: ceiling } }).limits[key]).toBe(ceiling);
    expect(await tablesLike('never_created_')).toEqual([]);
  });

  it('refuses a bad table prefix or database when the store is built, before anything is written', async () => {
    for (const value of Object.values(HOSTILE)) {
      expectTypedRefusal(await thrown(() => new MysqlJobStore({ dataSource, tablePrefix: value })), InvalidIdentifierError, /^tablePrefix must be a lower-case SQL identifier/);
      expectTypedRefusal(await thrown(() => new MysqlJobStore({ dataSource, database: value })), InvalidIdentifierError, /^database must be a lower-case SQL identifier/);
    }
    // MySQL refuses names past 64 characters, and the longest table the store adds is concurrency_limits (18).
    const longest = `p${'x'.repeat(44)}_`;
    expect(new MysqlJobStore({ dataSource, tablePrefix: longest }).naming.limits).toBe(`\`${longest}concurrency_limits\``);
    expectTypedRefusal(await thrown(() => new MysqlJobStore({ dataSource, tablePrefix: `${longest}x` })), InvalidIdentifierError, /^tablePrefix must be at most 46 characters, because/);
    expect(await tablesLike(longest.slice(0, 10))).toEqual([]);
    const schemas = (await dataSource.query('SELECT schema_name AS name FROM information_schema.schemata WHERE schema_name IN (?)', [Object.values(HOSTILE)])) as unknown[];
    expect(schemas).toEqual([]);
  });

  it('refuses at migrate a database that does not exist with a typed error that names it, and writes nothing', async () => {
    const prefix = uniquePrefix('nodb');
    const store = new MysqlJobStore({ dataSource, database: 'no_such_database', tablePrefix: prefix, poolSize: 1 });
    stores.push(store);
    const error = await thrown(() => store.migrate());
    expect(error).toBeInstanceOf(SchedulerError);
    expect(error.message).toMatch(/no_such_database/);
    expect(error.message).toMatch(/^[^\n]+\.$/);
    expect(await tablesLike(prefix)).toEqual([]);
  });
});
