import { describe, expect, it } from '@jest/globals';
import type { MysqlJobStore } from '../../lib/index.js';
import { openMariadbDataSource } from '../support/mariadb.js';
import { mysqlTarget } from '../support/targets/mysql.target.js';

describe('the MariaDB conformance target', () => {
  const tablesOf = async (admin: Awaited<ReturnType<typeof openMariadbDataSource>>, prefix: string) =>
    Number((await admin.query(`SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE CONCAT(REPLACE(?, '_', '\\\\_'), '%')`, [prefix]))[0].n);

  it('empties an installation after its case and hands it to a later one, as a fresh migrate left it; teardown drops it', async () => {
    const admin = await openMariadbDataSource({ poolSize: 1 });
    const target = await mysqlTarget();
    let tornDown = false;
    try {
      const first = await target.open();
      const fresh = await first.snapshot();
      await first.store.jobEnqueue({ job: { name: 'left.behind', payload: {} } });
      const { prefix } = (first.store as MysqlJobStore).naming;
      await target.cleanup!();
      const again = await target.open();
      expect((again.store as MysqlJobStore).naming.prefix).toBe(prefix);
      expect(await again.countJobs()).toBe(0);
      expect(await again.snapshot()).toEqual(fresh);
      const off = await target.open({ historyPolicy: 'off' });
      expect((off.store as MysqlJobStore).naming.prefix).not.toBe(prefix);
      await target.teardown();
      tornDown = true;
      expect(await tablesOf(admin, prefix)).toBe(0);
    } finally {
      if (!tornDown) await target.teardown();
      await admin.destroy();
    }
  });

  it('drops, rather than reuses, an installation whose columns a case changed', async () => {
    const admin = await openMariadbDataSource({ poolSize: 1 });
    const target = await mysqlTarget();
    try {
      const { store } = await target.open();
      const { prefix } = (store as MysqlJobStore).naming;
      await admin.query(`ALTER TABLE \`${prefix}jobs\` ADD COLUMN stray integer`);
      await target.cleanup!();
      expect(await tablesOf(admin, prefix)).toBe(0);
      expect(((await target.open()).store as MysqlJobStore).naming.prefix).not.toBe(prefix);
    } finally {
      await target.teardown();
      await admin.destroy();
    }
  });
});
