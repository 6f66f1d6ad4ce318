// Recurring schedules at scale: N interval schedules minted by one WorkerNode (scheduling on, every
// other option at its default), what an occurrence costs beside a plain job enqueued at the same
// rate, and the catch-up after an outage (the schedules moved back in SQL, as
// test/store/postgres-minting.spec.ts does) while plain jobs keep arriving.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile } from '../peers/cell.mjs';
import { postgresCpuMs } from '../support.mjs';

const payload = (k) => ({ k, pad: 'x'.repeat(84) });

/**
 * Enqueues plain jobs one by one at about `rate` per second until stopped. Each enqueue commits
 * (and waits for its flush) on its own, as an application's would, so up to 32 are in flight.
 */
function producer(store, rate) {
  let stopped = false;
  let sent = 0;
  let failed = 0;
  const t0 = performance.now();
  const loop = (async () => {
    const inflight = new Set();
    while (!stopped) {
      const target = Math.floor(((performance.now() - t0) / 1_000) * rate);
      while (sent < target && inflight.size < 32) {
        const p = store
          .jobEnqueue({ job: { name: 'plain', payload: payload(sent) } })
          .catch(() => void (failed += 1))
          .finally(() => inflight.delete(p));
        inflight.add(p);
        sent += 1;
      }
      await (inflight.size >= 32 ? Promise.race(inflight) : sleep(5));
    }
    await Promise.all(inflight);
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return { sent, failed };
    },
  };
}

/**
 * PostgreSQL CPU per second while this bench does nothing: what other work on the machine adds
 * to every PostgreSQL CPU figure (postgresCpuMs counts every PostgreSQL process). Null when the
 * server is not on this machine.
 */
export async function backgroundPgCpu(ms = 5_000) {
  const pg0 = postgresCpuMs();
  await sleep(ms);
  return pg0 === null ? null : Math.round(((postgresCpuMs() - pg0) * 1_000) / ms);
}

/** CPU of this process and of every PostgreSQL process, read together. */
function cpuNow() {
  const { user, system } = process.cpuUsage();
  return { node: (user + system) / 1_000, pg: postgresCpuMs() };
}

function cpuPer(from, to, count) {
  const node = (to.node - from.node) / count;
  const pg = from.pg === null ? null : (to.pg - from.pg) / count;
  return { nodeCpuMs: +node.toFixed(4), pgCpuMs: pg === null ? null : +pg.toFixed(4), totalCpuMs: pg === null ? null : +(node + pg).toFixed(4) };
}

const waitsOf = (xs) => ({
  count: xs.length,
  p50: Math.round(percentile(xs, 50)),
  p99: Math.round(percentile(xs, 99)),
  max: Math.round(Math.max(0, ...xs)),
  over5s: xs.filter((x) => x > 5_000).length,
});

async function until(done, capMs, everyMs = 100) {
  const end = Date.now() + capMs;
  while (Date.now() < end) {
    if (await done()) return true;
    await sleep(everyMs);
  }
  return false;
}

/**
 * Plain jobs at `rate`/s through one node: CPU per job over the window (enqueue and run, this
 * process and the server), and how late each started (start − run_at).
 */
export async function plainRun({ library, url, rate, warmupMs, windowMs }) {
  const worker = await library.open(url, { max: 10 });
  const producing = await library.open(url, { max: 16 });
  let handled = 0;
  let measuring = false;
  const waits = [];
  const handlers = {
    plain: {
      handle: (_payload, context) => {
        handled += 1;
        if (measuring) waits.push(Date.now() - context.scheduledFor.getTime());
      },
    },
  };
  const node = new library.WorkerNode({ store: worker.store, invoker: new library.FunctionInvoker(handlers), options: {} });
  await node.start();
  const jobs = producer(producing.store, rate);
  try {
    await sleep(warmupMs);
    measuring = true;
    const from = cpuNow();
    const handled0 = handled;
    const t0 = performance.now();
    await sleep(windowMs);
    const to = cpuNow();
    const count = handled - handled0;
    const seconds = (performance.now() - t0) / 1_000;
    measuring = false;
    const { sent, failed } = await jobs.stop();
    await until(() => handled >= sent - failed, 60_000);
    return { targetRate: rate, rate: Math.round(count / seconds), jobs: count, ...cpuPer(from, to, count), waitMs: waitsOf(waits) };
  } finally {
    await jobs.stop();
    await node.stop();
    await worker.close();
    await producing.close();
  }
}

/**
 * N schedules every `everyMs`, minted and run by one node. Creates the schedules (scheduleUpsert,
 * 8 at a time, so their anchors spread over the creation time as a real deployment's do), warms
 * up, then measures a window: occurrences minted (by the jobs' created_at), CPU per occurrence,
 * how late each was minted (created_at − scheduled_for) and started.
 */
export async function scheduleRun({ library, url, count, everyMs, warmupMs, windowMs, log }) {
  const worker = await library.open(url, { max: 10 });
  try {
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < count) {
          next += 1;
          await worker.store.scheduleUpsert({ schedule: { name: 'tick', everyMs } });
        }
      }),
    );
    const createMs = Math.round(performance.now() - t0);
    log(`  ${count.toLocaleString('en-US')} schedules created in ${(createMs / 1_000).toFixed(1)} s`);
    let ran = 0;
    let measuring = false;
    const starts = [];
    const handlers = {
      tick: {
        handle: (_payload, context) => {
          ran += 1;
          if (measuring) starts.push(Date.now() - context.scheduledFor.getTime());
        },
      },
    };
    const node = new library.WorkerNode({ store: worker.store, invoker: new library.FunctionInvoker(handlers), options: {} });
    await node.start();
    try {
      await sleep(warmupMs);
      const [{ now: from }] = await worker.dataSource.query('SELECT now()');
      measuring = true;
      const cpu0 = cpuNow();
      const ran0 = ran;
      // A whole number of intervals, so every schedule fires the same number of times in the
      // window however their anchors are spread.
      await sleep(Math.max(1, Math.round(windowMs / everyMs)) * everyMs);
      const cpu1 = cpuNow();
      measuring = false;
      const [{ now: to }] = await worker.dataSource.query('SELECT now()');
      const [minted] = await worker.dataSource.query(
        `SELECT count(*)::int AS n,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY late) AS p50,
                percentile_cont(0.99) WITHIN GROUP (ORDER BY late) AS p99,
                max(late) AS max
         FROM (SELECT extract(epoch FROM created_at - scheduled_for) * 1000 AS late FROM durable_scheduler.jobs
               WHERE schedule_id IS NOT NULL AND created_at >= $1 AND created_at < $2) m`,
        [from, to],
      );
      const seconds = (to.getTime() - from.getTime()) / 1_000;
      return {
        schedules: count,
        everyMs,
        createMs,
        minted: minted.n,
        mintedPerSec: Math.round(minted.n / seconds),
        ran: ran - ran0,
        ...cpuPer(cpu0, cpu1, minted.n),
        mintLateMs: { p50: Math.round(minted.p50 ?? NaN), p99: Math.round(minted.p99 ?? NaN), max: Math.round(minted.max ?? NaN) },
        startLateMs: waitsOf(starts),
      };
    } finally {
      await node.stop();
    }
  } finally {
    await worker.close();
  }
}

/**
 * The outage: every interval schedule moved `outageMs` back (its next tick and its anchor), then a
 * node with a logger counting lines by level starts while plain jobs arrive at `rate`/s. Measured
 * until no active schedule is due by more than a second: the time to get there, the first minting
 * pass's duration (where the node exposes `minter.passes`), the log lines, and how long the plain
 * jobs waited (start − run_at).
 */
export async function catchUpRun({ library, url, outageMs, rate, capMs, log }) {
  const worker = await library.open(url, { max: 10 });
  const producing = await library.open(url, { max: 16 });
  const lines = { log: 0, warn: 0, error: 0, debug: 0 };
  let sample = null;
  const logger = {
    log: () => void (lines.log += 1),
    warn: (m) => {
      lines.warn += 1;
      sample ??= String(m).slice(0, 160);
    },
    error: () => void (lines.error += 1),
    debug: () => void (lines.debug += 1),
  };
  let handled = 0;
  const waits = [];
  const handlers = {
    tick: { handle: () => {} },
    plain: {
      handle: (_payload, context) => {
        handled += 1;
        waits.push(Date.now() - context.scheduledFor.getTime());
      },
    },
  };
  try {
    const [{ n: moved }] = await worker.dataSource.query(
      `WITH moved AS (
         UPDATE durable_scheduler.schedules SET next_fire_at = next_fire_at - $1 * interval '1 millisecond', anchor_at = anchor_at - $1 * interval '1 millisecond'
         WHERE interval_ms IS NOT NULL AND state = 'active' RETURNING 1
       ) SELECT count(*)::int AS n FROM moved`,
      [outageMs],
    );
    log(`  ${moved.toLocaleString('en-US')} schedules moved ${outageMs / 60_000} minutes back`);
    const skippedSql = `SELECT coalesce(sum(skipped_ticks), 0)::bigint AS n FROM durable_scheduler.schedules`;
    const [skipped0] = await worker.dataSource.query(skippedSql);
    const node = new library.WorkerNode({ store: worker.store, invoker: new library.FunctionInvoker(handlers), logger, options: {} });
    const jobs = producer(producing.store, rate);
    const t0 = performance.now();
    let firstPassMs = null;
    let caughtUpMs = null;
    await node.start();
    try {
      const overdue = async () =>
        (await worker.dataSource.query(`SELECT count(*)::int AS n FROM durable_scheduler.schedules WHERE state = 'active' AND next_fire_at < now() - interval '1 second'`))[0].n;
      await until(async () => {
        if (firstPassMs === null && (node.minter?.passes ?? 0) >= 1) firstPassMs = Math.round(performance.now() - t0);
        if ((await overdue()) > 0) return false;
        caughtUpMs = Math.round(performance.now() - t0);
        return true;
      }, capMs);
      // A few seconds more, so jobs enqueued at the end of the catch-up are seen through it.
      await sleep(5_000);
      const { sent, failed } = await jobs.stop();
      await until(() => handled >= sent - failed, 60_000);
      const [skipped] = await worker.dataSource.query(skippedSql);
      return {
        outageMs,
        schedules: moved,
        caughtUpMs,
        capped: caughtUpMs === null,
        firstPassMs,
        skippedTicks: Number(skipped.n) - Number(skipped0.n),
        lines,
        warnSample: sample,
        plainRate: rate,
        plainSent: sent,
        plainWaitMs: waitsOf(waits),
      };
    } finally {
      await jobs.stop();
      await node.stop();
    }
  } finally {
    await worker.close();
    await producing.close();
  }
}
