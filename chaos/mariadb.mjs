// The chaos run's MariaDB (`--store mariadb`): the MySQL store under the same processes, faults
// and checks as on PostgreSQL. The server is MARIADB_URL's if set; else a private one this run
// starts from the machine's mariadbd (chaos/mariadb-server.mjs), the only kind it can restart;
// else, with no mariadbd to start, the machine's on mysql://root@127.0.0.1:3306. Each run makes
// two fresh databases, one for the chaos tables and one for the scheduler's.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { mariadbBinaries, startPrivateMariadb } from './mariadb-server.mjs';

const MACHINE_URL = 'mysql://root@127.0.0.1:3306';
const CONNECTION_LOST = new Set(['PROTOCOL_CONNECTION_LOST', 'ECONNRESET', 'EPIPE', 'ECONNREFUSED']);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A DATETIME(3) text in UTC, as the store writes instants (lib/store/mysql/mysql-instant.ts). */
const utc = (ms) => new Date(ms).toISOString().slice(0, 23).replace('T', ' ');

/**
 * Starts (or connects to) the server, creates the databases and the chaos tables, migrates the
 * scheduler's and installs the lease audit, all before any process starts.
 */
export async function openMariadb({ lib, checks, runDir }) {
  const given = process.env.MARIADB_URL;
  const binaries = given ? null : mariadbBinaries();
  const server = binaries ? await startPrivateMariadb(join(runDir, 'mariadb'), binaries) : null;
  const origin = given ? 'MARIADB_URL' : server ? `private server on port ${server.port}` : `${MACHINE_URL}, no mariadbd found to start a private one`;
  const base = new URL(given ?? server?.url ?? MACHINE_URL);
  const suffix = randomBytes(3).toString('hex');
  const names = { chaos: `chaos_${suffix}`, scheduler: `chaos_${suffix}_scheduler`, prefix: '' };
  // The processes connect with the chaos database as their default one, which is how the fault
  // finds their sessions (the store's own pool takes the DataSource's options, database included).
  const appUrl = new URL(base);
  appUrl.pathname = `/${names.chaos}`;

  // The controller's sessions have no default database, so they are never a fault's target.
  const pool = mysql.createPool({
    host: base.hostname,
    port: Number(base.port || 3306),
    user: decodeURIComponent(base.username || 'root'),
    password: decodeURIComponent(base.password),
    connectionLimit: 2,
    multipleStatements: true,
    dateStrings: true,
    supportBigNumbers: true,
  });
  // A pooled session the server dropped (a restart) fails its next statement once; try again.
  const sql = async (text, params) => {
    for (let tries = 1; ; tries += 1) {
      try {
        return (await pool.query(text, params))[0];
      } catch (error) {
        if (!CONNECTION_LOST.has(error.code) || tries >= 3) throw error;
        await sleep(200);
      }
    }
  };
  let version;
  try {
    version = (await sql('SELECT VERSION() AS v'))[0].v;
  } catch (error) {
    await server?.stop();
    throw new Error(`No MariaDB server answered at ${base.host} (${error.code ?? error.message}): install mariadb-server (its mariadbd is started privately), or point MARIADB_URL at a server.`);
  }
  try {
    await sql(checks.chaosTablesSql(names.chaos, checks.MARIADB_DIALECT));
    await sql(`CREATE DATABASE \`${names.scheduler}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    const migrator = await new DataSource({ type: 'mariadb', url: appUrl.href, poolSize: 2 }).initialize();
    const migrated = new lib.MysqlJobStore({ dataSource: migrator, database: names.scheduler });
    await migrated.migrate();
    names.prefix = migrated.naming.prefix;
    await migrated.close();
    await migrator.destroy();
    await sql(checks.leaseAuditSql(names, checks.MARIADB_DIALECT));
  } catch (error) {
    await pool.end().catch(() => {});
    await server?.stop();
    throw error;
  }

  const c = `\`${names.chaos}\``;
  const jobs = `\`${names.scheduler}\`.\`${names.prefix}jobs\``;

  return {
    store: 'mariadb',
    name: 'MariaDB',
    server: `${version} (${origin})`,
    external: !server,
    notes: server ? [] : [`the server is not one this run started (${origin}), so the database-restart fault is skipped.`],
    names,
    dialect: checks.MARIADB_DIALECT,
    faultKinds: ['kill_worker', 'kill_producer', 'kill_connections', 'pause_worker', ...(server ? ['restart_db'] : [])],
    sessionCounts: { kill_connections: 0, killed_connections: 0, killed_in_transaction: 0 },
    appEnv: { CHAOS_STORE: 'mariadb', CHAOS_DATABASE_URL: appUrl.href, CHAOS_SCHEMA: names.chaos, CHAOS_SCHEDULER_SCHEMA: names.scheduler },
    sql,
    restart: server ? (o) => server.restart(o) : null,
    restartKinds: ['clean shutdown (SIGTERM)', 'SIGKILL: crash recovery from the redo log'],

    /** Live leases per worker: how many, and how many on a job's last attempt. */
    leases: async () =>
      (
        await sql(`SELECT worker_id, COUNT(*) AS n, SUM(attempt >= max_attempts) AS final
                   FROM ${jobs} WHERE state = 'running' AND leased_until > UTC_TIMESTAMP(3) GROUP BY worker_id`)
      ).map((r) => ({ worker_id: r.worker_id, n: Number(r.n), final: Number(r.final) })),

    /** Committed jobs not yet terminal. */
    unfinished: async () =>
      Number(
        (
          await sql(`SELECT COUNT(*) AS n FROM ${c}.enqueued e LEFT JOIN ${jobs} j ON j.id = e.job_id
                     WHERE j.id IS NULL OR j.state NOT IN ('succeeded', 'dead_lettered', 'cancelled', 'quarantined')`)
        )[0].n,
      ),

    /**
     * KILL CONNECTION of 1-3 of the processes' sessions (the DataSource's or the store's own pool:
     * claims, heartbeats, outcome writes, attempt transactions, producers' enqueues); one time in
     * three only sessions inside an open InnoDB transaction. Each victim is named by the process
     * that holds its socket, when /proc tells.
     */
    async killSessions({ random, pick, members }) {
      const rows = await sql(
        `SELECT p.ID AS id, p.HOST AS host, p.COMMAND AS command, LEFT(p.INFO, 60) AS info, t.trx_id IS NOT NULL AS in_trx
         FROM information_schema.PROCESSLIST p LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID
         WHERE p.DB = ? AND p.ID <> CONNECTION_ID()`,
        [names.chaos],
      );
      const inTransactionOnly = random.next() < 1 / 3;
      const candidates = inTransactionOnly ? rows.filter((r) => Number(r.in_trx) === 1) : rows;
      if (candidates.length === 0) throw new Error(inTransactionOnly ? 'no app session in a transaction' : 'no app session');
      const victims = new Map();
      const n = 1 + Math.floor(random.next() * 3);
      for (let i = 0; i < n; i += 1) {
        const row = pick(candidates);
        victims.set(row.id, row);
      }
      const owners = socketOwners(members);
      const killed = [];
      for (const row of victims.values()) {
        try {
          await sql(`KILL CONNECTION ${Number(row.id)}`);
          killed.push(row);
        } catch (error) {
          if (error.errno !== 1094) throw error; // 1094: the session ended meanwhile
        }
      }
      if (killed.length === 0) throw new Error('every chosen session ended first');
      const inTrx = killed.filter((r) => Number(r.in_trx) === 1).length;
      const describe = (r) => `${owners.get(Number(String(r.host).split(':').pop())) ?? 'unknown process'} (${Number(r.in_trx) === 1 ? 'in a transaction, ' : ''}${r.command}${r.info ? `: ${r.info.replace(/\s+/g, ' ')}` : ''})`;
      return {
        counts: { kill_connections: 1, killed_connections: killed.length, killed_in_transaction: inTrx },
        line: `KILL CONNECTION x${killed.length} (${inTrx} in a transaction): ${killed.map(describe).join('; ')}`,
      };
    },

    /** Inserts rows as multi-row VALUES, a few thousand per statement; instants become UTC text. */
    async insertRows(table, columns, rows) {
      const value = (v, type) => (v === null || v === undefined ? null : type === 'timestamptz' ? utc(v) : type === 'boolean' ? (v ? 1 : 0) : v);
      for (let i = 0; i < rows.length; i += 2_000) {
        const chunk = rows.slice(i, i + 2_000).map((row) => columns.map(([name, type]) => value(row[name], type)));
        await sql(`INSERT INTO ${c}.${table} (${columns.map(([name]) => `\`${name}\``).join(', ')}) VALUES ?`, [chunk]);
      }
    },

    /** A checked table's rows, for the dump of a failed run; bytes (keys) as their UTF-8 text. */
    async tableRows(owner, table) {
      const name = owner === 'chaos' ? table : `${names.prefix}${table}`;
      const rows = await sql(`SELECT * FROM \`${names[owner]}\`.\`${name}\``);
      const text = rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('utf8') : v])));
      return { name: `${names[owner]}.${name}`, rows: text };
    },

    /** verifyHistory (docs/verify.md) over the scheduler's own tables, through a store of its own. */
    async verify() {
      const dataSource = await new DataSource({ type: 'mariadb', url: appUrl.href, poolSize: 2 }).initialize();
      const store = new lib.MysqlJobStore({ dataSource, database: names.scheduler });
      try {
        return await lib.verifyHistory(store);
      } finally {
        await store.close();
        await dataSource.destroy();
      }
    },

    /** Ends the controller's pool; drops the databases of a server the run did not start when asked; stops a private server. */
    async close({ drop }) {
      if (!server && drop) await sql(`DROP DATABASE \`${names.chaos}\`; DROP DATABASE \`${names.scheduler}\``);
      await pool.end();
      await server?.stop();
    },

    /** Whatever went wrong, leave no server behind. */
    abort: async () => server?.kill(),
  };
}

/**
 * Which process holds each local TCP port: the processlist names a session by its client's
 * address, and /proc maps the port to a socket inode and the inode to a process. An empty map
 * where /proc is not Linux's.
 */
function socketOwners(members) {
  const byInode = new Map();
  for (const member of members) {
    let fds = [];
    try {
      fds = readdirSync(`/proc/${member.pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${member.pid}/fd/${fd}`));
        if (match) byInode.set(match[1], member.name);
      } catch {
        // the descriptor closed meanwhile
      }
    }
  }
  const byPort = new Map();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines = [];
    try {
      lines = readFileSync(file, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || !byInode.has(fields[9])) continue;
      byPort.set(parseInt(fields[1].split(':').pop(), 16), byInode.get(fields[9]));
    }
  }
  return byPort;
}
