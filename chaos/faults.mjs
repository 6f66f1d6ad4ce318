// The safety phase's faults: a plan drawn from the seed up front (when, and which kind), and an
// injector that picks each fault's target from the live system when its time comes.
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The session fault is pg_terminate_backend on PostgreSQL and KILL CONNECTION on MariaDB; each
// database lists its kinds (chaos/postgres.mjs, chaos/mariadb.mjs).
const WEIGHTS = { kill_worker: 0.28, kill_producer: 0.1, terminate_backends: 0.32, kill_connections: 0.32, pause_worker: 0.2, restart_db: 0.1 };

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
   * @param {{ cluster, db: object, respawn: (role: string, slot: number) => Promise<void>, random, leaseMs: number, say: (line: string) => void }} deps
   *   `db`: the run's database (chaos/postgres.mjs or chaos/mariadb.mjs): its leases, its session fault, its restart.
   */
  constructor(deps) {
    this.deps = deps;
    this.counts = { kill_worker: 0, kill_producer: 0, respawn: 0, ...deps.db.sessionCounts, pause_worker: 0, restart_db: 0, skipped: 0 };
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
      const rows = await this.deps.db.leases().catch(() => []);
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

  /** pg_terminate_backend (PostgreSQL) on 1-3 of the app's connections. */
  async terminate_backends() {
    await this.killSessions();
  }

  /** KILL CONNECTION (MariaDB) of 1-3 of the app's sessions. */
  async kill_connections() {
    await this.killSessions();
  }

  async killSessions() {
    const { cluster, db, random } = this.deps;
    const members = [...cluster.live('worker'), ...cluster.live('producer')];
    const { counts, line } = await db.killSessions({ random, pick: (items) => this.pick(items), members });
    for (const [key, n] of Object.entries(counts)) this.counts[key] += n;
    this.deps.say(line);
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
    const { db } = this.deps;
    if (!db.restart) {
      this.counts.skipped += 1;
      return;
    }
    const immediate = this.deps.random.next() < 0.5;
    const downMs = 500 + Math.floor(this.deps.random.next() * 2_500);
    const [fast, crash] = db.restartKinds ?? ['fast shutdown', 'immediate: crash recovery'];
    this.deps.say(`restarting ${db.name} (${immediate ? crash : fast}, down ${downMs} ms)`);
    await db.restart({ immediate, downMs });
    this.counts.restart_db += 1;
    this.deps.say(`${db.name} is back`);
  }
}
