import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DataSource, QueryRunner } from 'typeorm';
import { MysqlConnections } from '../../lib/store/mysql/mysql-connections.js';
import { SEQUENCE_TASK, sequenceHistory } from '../../lib/store/mysql/mysql-history-sequencer.js';
import { mysqlInstall } from '../../lib/store/mysql/mysql-install.js';
import { historyRead } from '../../lib/store/mysql/mysql-maintenance.js';
import { migrateMysql } from '../../lib/store/mysql/mysql-migrator.js';
import { mysqlNaming } from '../../lib/store/mysql/mysql-naming.js';
import type { HistoryEntry } from '../../lib/store/index.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

const JOB = '00000000-0000-7000-8000-000000000001';

describe('MySQL history sequencer (MariaDB)', () => {
  let dataSource: DataSource;
  let conns: MysqlConnections;
  const naming = mysqlNaming(uniquePrefix('seq'));
  const runners: QueryRunner[] = [];

  /** A transaction on one of the DataSource's sessions, as a host's enqueue would hold it open. */
  const hostTransaction = async (): Promise<QueryRunner> => {
    const runner = dataSource.createQueryRunner();
    runners.push(runner);
    await runner.startTransaction();
    return runner;
  };
  const insertEntry = (db: { query(sql: string, values?: unknown[]): Promise<unknown> }, name: string) =>
    db.query(`INSERT INTO ${naming.history} (job_id, name, at, state, attempt) VALUES (?, ?, UTC_TIMESTAMP(3), 'scheduled', 0)`, [JOB, name]);
  const committed = async (...names: string[]) => {
    for (const name of names) await insertEntry(dataSource, name);
  };
  const rows = async () =>
    ((await dataSource.query(`SELECT id, pos, name FROM ${naming.history} ORDER BY id`)) as { id: string; pos: string | null; name: string }[]).map((row) => ({
      id: Number(row.id),
      pos: row.pos === null ? null : Number(row.pos),
      name: row.name,
    }));

  /**
   * Resolves once `count` sessions are running a statement that contains `fragment`, as the
   * server's process list shows it: the interleaving is observed, never guessed with a timer.
   */
  const untilRunning = async (fragment: string, count: number) => {
    for (;;) {
      const [row] = (await dataSource.query(`SELECT COUNT(*) AS n FROM information_schema.processlist WHERE command = 'Query' AND INSTR(info, ?) > 0`, [
        fragment,
      ])) as { n: number | string }[];
      if (Number(row!.n) >= count) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  beforeAll(async () => {
    dataSource = await openMariadbDataSource();
    conns = new MysqlConnections(dataSource, 6);
    await migrateMysql(conns, naming, mysqlInstall());
  });
  beforeEach(async () => {
    await Promise.all(runners.splice(0).map(async (runner) => {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }));
    await dataSource.query(`TRUNCATE TABLE ${naming.history}`);
    await dataSource.query(`DELETE FROM ${naming.maintenance}`);
  });
  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.release()));
    await conns.close();
    await dropInstallation(dataSource, naming);
    await dataSource.destroy();
  });

  it('delivers an entry that commits while an earlier one is still being written, and the earlier one after it commits, never skipping it', async () => {
    const a = await hostTransaction();
    await insertEntry(a, 'a');
    const b = await hostTransaction();
    await insertEntry(b, 'b');
    await b.commitTransaction();
    expect((await rows()).map((row) => [row.id, row.name])).toEqual([[2, 'b']]);

    // A holds id 1 open: the read is not held up by it, and hands out B's entry.
    const first = await historyRead(conns, naming, { after: '0', limit: 10 });
    expect(first.map((entry) => [entry.id, entry.name, entry.position])).toEqual([[2, 'b', '1']]);
    expect(await historyRead(conns, naming, { after: first[0]!.position, limit: 10 })).toEqual([]);

    // A commits late: an observer at B's position is still fed A's entry, at a later position.
    await a.commitTransaction();
    const second = await historyRead(conns, naming, { after: first[0]!.position, limit: 10 });
    expect(second.map((entry) => [entry.id, entry.name, entry.position])).toEqual([[1, 'a', '2']]);
    expect((await historyRead(conns, naming, { after: '0', limit: 10 })).map((entry) => entry.name)).toEqual(['b', 'a']);
  });

  it('never numbers an entry that rolls back, and leaves no gap for it', async () => {
    const doomed = await hostTransaction();
    await insertEntry(doomed, 'rolled-back');
    await committed('kept-1');
    expect(await sequenceHistory(conns, naming)).toBe(1);
    await doomed.rollbackTransaction();
    await committed('kept-2');
    expect(await sequenceHistory(conns, naming)).toBe(1);
    expect((await rows()).map((row) => [row.name, row.pos])).toEqual([
      ['kept-1', 1],
      ['kept-2', 2],
    ]);
  });

  it('never hands out a position twice after retention deletes the newest entries', async () => {
    await committed('e1', 'e2', 'e3');
    const log = await historyRead(conns, naming, { after: '0', limit: 10 });
    expect(log.map((entry) => entry.position)).toEqual(['1', '2', '3']);
    // An observer has passed position 3; then the purge deletes the jobs of entries 2 and 3.
    await dataSource.query(`DELETE FROM ${naming.history} WHERE pos >= 2`);
    await committed('e4');
    expect((await historyRead(conns, naming, { after: '3', limit: 10 })).map((entry) => [entry.name, entry.position])).toEqual([['e4', '4']]);
  });

  it('writes nothing and takes no lock when nothing committed waits for a position', async () => {
    const open = await hostTransaction();
    await insertEntry(open, 'in flight');
    // The only unnumbered entry is uncommitted: the pass returns without touching the sequencer's row.
    expect(await sequenceHistory(conns, naming)).toBe(0);
    expect(await dataSource.query(`SELECT task FROM ${naming.maintenance}`)).toEqual([]);
    await open.commitTransaction();
    expect(await sequenceHistory(conns, naming)).toBe(1);
    expect(await conns.session((db) => db.query(`SELECT task, last_id FROM ${naming.maintenance}`))).toEqual([{ task: SEQUENCE_TASK, last_id: 1 }]);
  });

  it('numbers a backlog larger than one pass over successive passes, in id order', async () => {
    await committed(...Array.from({ length: 7 }, (_, i) => `e${i + 1}`));
    expect(await sequenceHistory(conns, naming, 3)).toBe(3);
    expect(await sequenceHistory(conns, naming, 3)).toBe(3);
    expect(await sequenceHistory(conns, naming, 3)).toBe(1);
    expect(await sequenceHistory(conns, naming, 3)).toBe(0);
    expect((await rows()).map((row) => [row.id, row.pos])).toEqual(Array.from({ length: 7 }, (_, i) => [i + 1, i + 1]));
  });

  it('numbers the committed entries around ones still being written, which follow once they commit', async () => {
    const open: QueryRunner[] = [];
    for (const name of ['e1', 'open-2', 'e3', 'open-4', 'e5', 'e6']) {
      if (name.startsWith('open')) {
        const tx = await hostTransaction();
        await insertEntry(tx, name);
        open.push(tx);
      } else {
        await committed(name);
      }
    }
    expect(await sequenceHistory(conns, naming)).toBe(4);
    expect((await rows()).map((row) => [row.id, row.pos])).toEqual([
      [1, 1],
      [3, 2],
      [5, 3],
      [6, 4],
    ]);
    for (const tx of open) await tx.commitTransaction();
    expect(await sequenceHistory(conns, naming)).toBe(2);
    expect((await rows()).map((row) => [row.id, row.pos])).toEqual([
      [1, 1],
      [2, 5],
      [3, 2],
      [4, 6],
      [5, 3],
      [6, 4],
    ]);
  });

  it('lets sequencers that wait on each other number one after the other: no position twice, none skipped', async () => {
    await committed(...Array.from({ length: 10 }, (_, i) => `e${i + 1}`));
    // Hold the sequencer's row, so that three passes queue on it and then run in turn.
    await sequenceHistory(conns, naming, 0);
    const holder = await hostTransaction();
    await holder.query(`SELECT last_id FROM ${naming.maintenance} WHERE task = ? FOR UPDATE`, [SEQUENCE_TASK]);
    const passes = [sequenceHistory(conns, naming, 4), sequenceHistory(conns, naming, 4), sequenceHistory(conns, naming, 4)];
    // The holder has the row, so a pass inside the statement that locks it is waiting for it.
    await untilRunning(`INSERT INTO ${naming.maintenance}`, 3);
    await holder.commitTransaction();
    expect((await Promise.all(passes)).sort()).toEqual([2, 4, 4]);
    expect((await rows()).map((row) => row.pos)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
  });

  it('feeds every reader every entry once, at consecutive positions, while writers commit out of order and readers race to number them', async () => {
    const ROUNDS = 12;
    const WRITERS = 4;
    const total = ROUNDS * WRITERS;
    let written = 0;
    // Each round opens four transactions that insert in turn (ids ascending) and commit in reverse,
    // so every commit but the last lands while a lower id is still open; a pass runs after the
    // first commit of each round, so that entry surely is numbered ahead of the ids below it.
    const write = async () => {
      for (let round = 0; round < ROUNDS; round += 1) {
        const open: QueryRunner[] = [];
        for (let w = 0; w < WRITERS; w += 1) {
          const tx = await hostTransaction();
          await insertEntry(tx, `r${round}-w${w}`);
          open.push(tx);
        }
        for (const [i, tx] of open.reverse().entries()) {
          await tx.commitTransaction();
          await tx.release();
          written += 1;
          if (i === 0) await sequenceHistory(conns, naming);
        }
      }
    };
    const follow = async () => {
      const seen: HistoryEntry[] = [];
      while (seen.length < total) {
        const after = seen.at(-1)?.position ?? '0';
        if (written === total) {
          // Everything has committed: one read must find the rest, or an entry was passed over.
          const rest = await historyRead(conns, naming, { after, limit: total });
          expect(rest).toHaveLength(total - seen.length);
          seen.push(...rest);
        } else {
          seen.push(...(await historyRead(conns, naming, { after, limit: 5 })));
        }
      }
      return seen;
    };
    const [, fed] = await Promise.all([write(), Promise.all([follow(), follow(), follow()])]);
    for (const seen of fed) {
      expect(seen.map((entry) => Number(entry.position))).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      expect(seen.map((entry) => entry.id)).toEqual(fed[0]!.map((entry) => entry.id));
    }
    expect(new Set(fed[0]!.map((entry) => entry.id)).size).toBe(total);
    // Each round's highest id, committed first, was fed ahead of the three below it.
    const byName = new Map(fed[0]!.map((entry, index) => [entry.name, index]));
    for (let round = 0; round < ROUNDS; round += 1) {
      const first = byName.get(`r${round}-w${WRITERS - 1}`)!;
      for (let w = 0; w < WRITERS - 1; w += 1) expect(byName.get(`r${round}-w${w}`)!).toBeGreaterThan(first);
    }
    const stored = await rows();
    expect(stored.map((row) => row.pos).sort((a, b) => a! - b!)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  });
});
