// The safety phase's faults: a plan drawn from the seed up front (when, and which kind), and an
// injector that picks each fault's target from the live system when its time comes.
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export const FAULT_KINDS = ['kill_worker', 'kill_producer', 'terminate_backends', 'pause_worker', 'restart_db'];
const WEIGHTS = { kill_worker: 0.28, kill_producer: 0.1, terminate_backends: 0.32, pause_worker: 0.2, restart_db: 0.1 };

/** Fault times (ms from the start of the safety phase) and kinds; every kind occurs at least once. */
export function planFaults(random, durationMs, kinds) {
  const pickKind = () => {
    const total = kinds.reduce((sum, kind) => sum + WEIGHTS[kind], 0);
    let roll = random.next() * total;
    for (const kind of kinds) if ((roll -= WEIGHTS[kind]) < 0) return kind;
    return kinds[kinds.length - 1];
  };
  const plan = [];
  for (let at = 2_000 + random.next() * 3_000; at < durationMs - 3_000; at += 1_500 + random.next() * 7_000) plan.push({ at: Math.round(at), kind: pickKind() });
  const slots = plan.map((_, i) => i);
  for (let i = slots.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random.next() * (i + 1));
    [slots[i], slots[j]] = [slots[j], slots[i]];
  }
  kinds.forEach((kind, i) => {
    if (i < slots.length) plan[slots[i]].kind = kind;
  });
  return plan;
}

export class FaultInjector {
  /**
   * @param {{ cluster, sql: (text: string, params?: unknown[]) => Promise<object[]>, restartDatabase: ((o: object) => Promise<void>) | null,
   *   respawn: (role: string, slot: number) => Promise<void>, random, leaseMs: number, schedulerSchema: string, say: (line: string) => void }} deps
   */
  constructor(deps) {
    this.deps = deps;
    this.counts = { kill_worker: 0, kill_producer: 0, respawn: 0, terminate_backends: 0, terminated_backends: 0, terminated_listen: 0, pause_worker: 0, restart_db: 0, skipped: 0 };
    /** Pauses that ran their course: { worker_id, stopped_at, resumed_at } in ms. */
    this.pauses = [];
    this.pending = new Set();
  }

  async inject(kind) {
    try {
      await this[kind]();
    } catch (error) {
      this.counts.skipped += 1;
      this.deps.say(`${kind} skipped: ${error.message}`);
    }
  }

  /** Waits for pauses to end and replacements to be ready. */
  async settle() {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  track(promise) {
    const tracked = promise.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  pick(items) {
    return items[Math.floor(this.deps.random.next() * items.length)];
  }

  /**
   * A running, unpaused worker, preferably one that holds live leases (so the fault lands
   * mid-attempt); with `preferFinal`, half the time one running some job's last allowed attempt:
   * a lease nobody may reclaim once it lapses, so only the fence stands between the worker's late
   * report and the sweep.
   */
  async target(preferFinal = false) {
    // Half the pauses wait (up to 3 s) for a worker running a last attempt; the rest take what is there.
    const waitForFinal = preferFinal && this.deps.random.next() < 0.5;
    for (let tries = 0; ; tries += 1) {
      const candidates = this.deps.cluster.live('worker').filter((m) => m.ready && !m.paused);
      if (candidates.length === 0) throw new Error('no running worker');
      const rows = await this.deps
        .sql(
          `SELECT worker_id, count(*)::int AS n, count(*) FILTER (WHERE attempt >= max_attempts)::int AS final
           FROM "${this.deps.schedulerSchema}".jobs WHERE state = 'running' AND leased_until > now() GROUP BY worker_id`,
        )
        .catch(() => []);
      const leases = new Map(rows.map((r) => [r.worker_id, r]));
      const busy = candidates.filter((m) => leases.has(m.name));
      const final = busy.filter((m) => leases.get(m.name).final > 0);
      if (waitForFinal && final.length === 0 && tries < 30) {
        await sleep(100);
        continue;
      }
      const member = this.pick(waitForFinal && final.length > 0 ? final : busy.length > 0 ? busy : candidates);
      const held = leases.get(member.name);
      return { member, leases: held ? `${held.n} lease(s), ${held.final} on a last attempt` : '0 leases' };
    }
  }

  async kill_worker() {
    const { member, leases } = await this.target();
    this.deps.cluster.kill9(member);
    this.counts.kill_worker += 1;
    this.deps.say(`kill -9 ${member.name} (holding ${leases})`);
    this.replace(member);
  }

  async kill_producer() {
    const producers = this.deps.cluster.live('producer').filter((m) => m.ready);
    if (producers.length === 0) throw new Error('no running producer');
    const member = this.pick(producers);
    this.deps.cluster.kill9(member);
    this.counts.kill_producer += 1;
    this.deps.say(`kill -9 ${member.name} (producer)`);
    this.replace(member);
  }

  replace(member) {
    const delay = 300 + Math.floor(this.deps.random.next() * 1_200);
    this.track(
      (async () => {
        await member.exited;
        await sleep(delay);
        await this.deps.respawn(member.role, member.slot);
        this.counts.respawn += 1;
      })(),
    );
  }

  /** pg_terminate_backend on 1-3 of the app's connections; one time in three, only LISTEN connections. */
  async terminate_backends() {
    const rows = await this.deps.sql(
      `SELECT pid, application_name, query FROM pg_stat_activity
       WHERE datname = current_database() AND application_name LIKE 'chaos-%' AND pid <> pg_backend_pid()`,
    );
    const listenOnly = this.deps.random.next() < 1 / 3;
    const pool = listenOnly ? rows.filter((r) => /^LISTEN/i.test(r.query ?? '')) : rows;
    if (pool.length === 0) throw new Error('no app connection');
    const victims = new Map();
    const n = 1 + Math.floor(this.deps.random.next() * 3);
    for (let i = 0; i < n; i += 1) {
      const row = this.pick(pool);
      victims.set(row.pid, row);
    }
    for (const row of victims.values()) await this.deps.sql('SELECT pg_terminate_backend($1)', [row.pid]);
    const listen = [...victims.values()].filter((r) => /^LISTEN/i.test(r.query ?? '')).length;
    this.counts.terminate_backends += 1;
    this.counts.terminated_backends += victims.size;
    this.counts.terminated_listen += listen;
    this.deps.say(`pg_terminate_backend x${victims.size} (${listen} LISTEN): ${[...victims.values()].map((r) => r.application_name).join(', ')}`);
  }

  /** SIGSTOP a worker for longer than its lease, then SIGCONT: its late reports must come back stale. */
  async pause_worker() {
    const { member, leases } = await this.target(true);
    const pauseMs = this.deps.leaseMs + 300 + Math.floor(this.deps.random.next() * 3_000);
    this.deps.cluster.pause(member);
    const stoppedAt = Date.now();
    this.counts.pause_worker += 1;
    this.deps.say(`SIGSTOP ${member.name} for ${pauseMs} ms (holding ${leases})`);
    this.track(
      (async () => {
        await sleep(pauseMs);
        if (!member.paused || member.exitInfo) return;
        const resumedAt = Date.now();
        this.deps.cluster.resume(member);
        this.pauses.push({ worker_id: member.name, stopped_at: stoppedAt, resumed_at: resumedAt });
      })(),
    );
  }

  async restart_db() {
    if (!this.deps.restartDatabase) {
      this.counts.skipped += 1;
      return;
    }
    const immediate = this.deps.random.next() < 0.5;
    const downMs = 500 + Math.floor(this.deps.random.next() * 2_500);
    this.deps.say(`restarting PostgreSQL (${immediate ? 'immediate: crash recovery' : 'fast shutdown'}, down ${downMs} ms)`);
    await this.deps.restartDatabase({ immediate, downMs });
    this.counts.restart_db += 1;
    this.deps.say('PostgreSQL is back');
  }
}
