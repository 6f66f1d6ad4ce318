import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import {
  InjectJobEntityManager,
  Job,
  PostgresJobStore,
  SchedulerClient,
  SchedulerModule,
  type JobHandler,
} from '../../lib/index.js';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';
import { settled } from './support.js';

const schema = uniqueSchema('rt');

@Job('rt.noop')
class NoopJob implements JobHandler {
  async handle() {}
}

@Job('rt.write')
class WriteJob implements JobHandler<{ n: number }> {
  constructor(@InjectJobEntityManager() private readonly em: EntityManager) {}
  async handle(payload: { n: number }) {
    await this.em.query(`INSERT INTO "${schema}".rt_writes (n) VALUES ($1)`, [payload.n]);
  }
}

/** Every statement the store and the attempt transactions send, in order, shortened to its verb. */
const statements: string[] = [];
const verb = (text: string) => {
  const t = text.trim().replace(/\s+/g, ' ');
  if (/^WITH input AS .* INSERT INTO/.test(t)) return 'enqueue';
  if (/^WITH paused AS/.test(t)) return 'claim';
  // The outcome write locks the jobs it ends before it writes them (docs/dependencies.md, "When a dependant is released").
  if (/^WITH (ending AS MATERIALIZED \( SELECT j\.id FROM \S+ j, unnest\(\$2::uuid\[\], \$3::integer\[\], \$4::text\[\]\).*?)?applied AS/.test(t)) return 'complete';
  if (/^UPDATE .* leased_until = now\(\) \+ \$4/.test(t)) return 'heartbeat';
  if (/^START TRANSACTION/.test(t)) return 'begin';
  if (/^COMMIT/.test(t)) return 'commit';
  if (/^ROLLBACK/.test(t)) return 'rollback';
  return t.split(' ').slice(0, 3).join(' ');
};

/** The statements a job cost, from the first one after its enqueue to its outcome. */
async function roundTrips(app: INestApplicationContext, name: 'rt.noop' | 'rt.write', payload: object) {
  const { id } = await app.get(SchedulerClient).enqueue(name, payload as never);
  const start = statements.lastIndexOf('enqueue') + 1;
  await settled(app, id);
  return statements.slice(start).filter((s) => s !== 'heartbeat');
}

describe('SQL round trips of one job, claim to outcome, on PostgreSQL', () => {
  let app: INestApplicationContext;

  beforeAll(async () => {
    const admin = await openPostgresDataSource(1);
    await admin.query(`CREATE SCHEMA "${schema}"`);
    await admin.query(`CREATE TABLE "${schema}".rt_writes (n integer NOT NULL)`);
    await admin.destroy();
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: databaseUrl(), extra: { max: 6 } }),
        SchedulerModule.forRootAsync({
          inject: [DataSource],
          useFactory: (dataSource: DataSource) => ({
            store: new PostgresJobStore({ dataSource, schema, onStatement: (text) => statements.push(verb(text)) }),
            // Only hints start jobs here, so no poll adds an empty claim to the count, and the schedule
            // minter (background work, not part of a job's cost) is off.
            pollIntervalMs: 3_600_000,
            scheduling: false,
            heartbeatIntervalMs: 10_000,
            leaseMs: 30_000,
          }),
        }),
      ],
      providers: [NoopJob, WriteJob],
    }).compile();
    app = await moduleRef.init();
    // Start-up is not a job's cost: the node's first claim goes out once start-up's own callbacks
    // have run, which can be after init() returns, so a job enqueued at once would count it too.
    // One job run to its end first leaves the node idle, as every measured job then finds it.
    const { id } = await app.get(SchedulerClient).enqueue('rt.noop', {});
    await settled(app, id);
  });

  afterAll(async () => {
    await app.close();
    const admin = await openPostgresDataSource(1);
    await dropSchemas(admin, [schema]);
    await admin.destroy();
  });

  it('a handler that does not use the EntityManager costs two: one claim, one outcome write', async () => {
    expect(await roundTrips(app, 'rt.noop', {})).toEqual(['claim', 'complete']);
  });

  it('a handler that writes through the EntityManager adds BEGIN and COMMIT around its own statements', async () => {
    expect(await roundTrips(app, 'rt.write', { n: 1 })).toEqual(['claim', 'begin', 'INSERT INTO "' + schema + '".rt_writes', 'complete', 'commit']);
  });
});
