import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { DriverNodeBeatParams } from '../../lib/store/checked/store-driver.js';
import { MysqlConnections } from '../../lib/store/mysql/mysql-connections.js';
import { mysqlInstall } from '../../lib/store/mysql/mysql-install.js';
import { migrateMysql } from '../../lib/store/mysql/mysql-migrator.js';
import { mysqlNaming } from '../../lib/store/mysql/mysql-naming.js';
import { nodeBeat, nodeList, nodePrune, nodeStop } from '../../lib/store/mysql/mysql-nodes.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

const START = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;

const beat = (id: string, fields: Partial<DriverNodeBeatParams> = {}): DriverNodeBeatParams => ({
  id,
  host: 'host-a',
  pid: 4242,
  version: '1.2.3',
  queues: ['default'],
  concurrency: 10,
  running: 0,
  ...fields,
});

describe('MySQL store node registry (MariaDB)', () => {
  let dataSource: DataSource;
  // One session, so the clock set on it (SET timestamp, which UTC_TIMESTAMP follows) holds for every call.
  let conns: MysqlConnections;
  const naming = mysqlNaming(uniquePrefix('node'));
  let now = START;

  const setClock = async (ms: number) => {
    now = ms;
    await conns.session((db) => db.run('SET timestamp = ?', [ms / 1000]));
  };
  const advance = (ms: number) => setClock(now + ms);
  const list = (params: { seenSince?: Date; limit?: number } = {}) => nodeList(conns, naming, { seenSince: params.seenSince ?? null, limit: params.limit ?? 100 });
  const ids = async (params?: { seenSince?: Date; limit?: number }) => (await list(params)).map((node) => node.id);

  beforeAll(async () => {
    dataSource = await openMariadbDataSource();
    conns = new MysqlConnections(dataSource, 1);
    await migrateMysql(conns, naming, mysqlInstall());
  });
  beforeEach(async () => {
    await dataSource.query(`TRUNCATE TABLE ${naming.nodes}`);
    await setClock(START);
  });
  afterAll(async () => {
    await conns.close();
    await dropInstallation(dataSource, naming);
    await dataSource.destroy();
  });

  it('registers a node on its first beat at the database clock, and records the store\'s finish mode', async () => {
    await nodeBeat(conns, naming, beat('node-a', { queues: ['mail', 'default'], concurrency: 4, running: 2 }), 'lean');
    expect(await list()).toEqual([
      {
        id: 'node-a',
        host: 'host-a',
        pid: 4242,
        version: '1.2.3',
        queues: ['mail', 'default'],
        concurrency: 4,
        running: 2,
        startedAt: new Date(START),
        lastSeenAt: new Date(START),
        stoppedAt: null,
        finish: 'lean',
      },
    ]);
  });

  it('updates a running node on later beats and keeps its start; a beat after its stop starts a new run', async () => {
    await nodeBeat(conns, naming, beat('node-a', { running: 1 }), 'keep');
    await advance(5_000);
    await nodeBeat(conns, naming, beat('node-a', { running: 3, queues: ['other'], concurrency: 7, pid: 99, host: 'host-b', version: '1.2.4' }), 'lean');
    expect(await list()).toEqual([
      expect.objectContaining({ running: 3, queues: ['other'], concurrency: 7, pid: 99, host: 'host-b', version: '1.2.4', finish: 'lean', startedAt: new Date(START), lastSeenAt: new Date(START + 5_000) }),
    ]);

    await advance(1_000);
    await nodeStop(conns, naming, { id: 'node-a' });
    const [stopped] = await list();
    expect(stopped).toMatchObject({ running: 0, stoppedAt: new Date(START + 6_000), lastSeenAt: new Date(START + 6_000), startedAt: new Date(START) });
    // A second stop, and the stop of a node never registered, change nothing.
    await advance(1_000);
    await nodeStop(conns, naming, { id: 'node-a' });
    await nodeStop(conns, naming, { id: 'never-beat' });
    expect(await list()).toEqual([stopped]);

    await nodeBeat(conns, naming, beat('node-a'), 'keep');
    expect(await list()).toEqual([expect.objectContaining({ startedAt: new Date(START + 7_000), lastSeenAt: new Date(START + 7_000), stoppedAt: null })]);
  });

  it('lists nodes most recently seen first, ties by id descending, bounded by the limit and by seenSince', async () => {
    for (const id of ['a', 'b', 'c']) {
      await nodeBeat(conns, naming, beat(id), 'keep');
      await advance(1_000);
    }
    await nodeBeat(conns, naming, beat('a'), 'keep');
    await nodeBeat(conns, naming, beat('d'), 'keep');
    expect(await ids()).toEqual(['d', 'a', 'c', 'b']);
    expect(await ids({ limit: 2 })).toEqual(['d', 'a']);
    expect(await ids({ seenSince: new Date(START + 2_000) })).toEqual(['d', 'a', 'c']);
    expect(await ids({ seenSince: new Date(START + 2_001) })).toEqual(['d', 'a']);
  });

  it('prunes only nodes not seen for longer than the retention, stopped or not, oldest first, a bounded batch at a time', async () => {
    for (const id of ['old-1', 'old-2', 'old-3']) {
      await nodeBeat(conns, naming, beat(id), 'keep');
      await advance(1_000);
    }
    await nodeStop(conns, naming, { id: 'old-3' });
    await advance(2 * HOUR);
    await nodeBeat(conns, naming, beat('fresh'), 'keep');
    await nodeBeat(conns, naming, beat('fresh-stopped'), 'keep');
    await nodeStop(conns, naming, { id: 'fresh-stopped' });

    expect(await nodePrune(conns, naming, { olderThanMs: HOUR, limit: 2 })).toBe(2);
    expect((await ids()).sort()).toEqual(['fresh', 'fresh-stopped', 'old-3']);
    expect(await nodePrune(conns, naming, { olderThanMs: HOUR, limit: 100 })).toBe(1);
    expect(await nodePrune(conns, naming, { olderThanMs: HOUR, limit: 100 })).toBe(0);
    expect((await ids()).sort()).toEqual(['fresh', 'fresh-stopped']);
  });
});
