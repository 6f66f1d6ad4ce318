// One system through one scenario: a fresh database on the pressure server, one worker process
// reporting each handler start, the rate producer, a probe reading every window, and after the
// last phase the time until the system's own table says the backlog is gone.
import { fmt, median } from '../support.mjs';
import { now, sleep, startWorkers } from '../peers/cell.mjs';
import { systems } from '../systems/index.mjs';
import { Ledger } from './ledger.mjs';
import { openProbe } from './probe.mjs';
import { RateProducer } from './producer.mjs';
import { plan } from './scenarios.mjs';

export const POOL = 10; // connections per worker process, as in every peers cell
const DRAIN_POLL_MS = 100;
const sleepUntil = (epoch) => sleep(Math.max(0, epoch - now()));
const peak = (values) => values.reduce((most, v) => Math.max(most, v), 0);

/** variant: from variants.mjs; opts: { rate, cleanS, heldS, recoveryS, windowS, drainCapS, readerIdleS }. */
export async function pressureCell(server, variant, scenarioId, scenario, opts, log = console.log) {
  const system = systems[variant.system];
  const db = await server.database(system);
  // Whatever was opened is closed in reverse order when the cell ends, whether it ended well or not.
  const closers = [() => db.drop()];
  let workers = null;
  // An interrupted run (the entry turns SIGINT into exit) must not leave a worker process behind.
  const killWorkers = () => workers?.children.forEach((child) => child.kill('SIGKILL'));
  process.once('exit', killWorkers);
  closers.push(async () => process.removeListener('exit', killWorkers));
  try {
    const probe = await openProbe(db, variant.jobsTable);
    closers.push(() => probe.close());
    workers = await startWorkers({ system: variant.system, url: db.url, settings: variant.settings, keys: true, pool: POOL });
    closers.push(() => workers.stop());
    const producer = await system.producer(db.url);
    closers.push(() => producer.close());
    await sleep(500); // every system reaches its steady idle state (pollers, LISTEN) first, as in the latency cells

    const timetable = plan(scenario.phases(opts), opts);
    const { phases, windows } = timetable;
    const expected = Math.ceil(phases.reduce((n, p) => n + p.offered * p.seconds, 0) * 1.05) + 1_000;
    const t0 = now();
    const ledger = new Ledger(timetable, t0, expected);
    const rate = new RateProducer(producer, (k0, n, at) => ledger.committed(k0, n, at));
    closers.push(() => rate.stop());
    const starts = workers.starts;
    const pump = setInterval(() => ledger.started(starts.splice(0)), 100);
    closers.push(async () => clearInterval(pump));
    const samples = [];
    const sampleWindow = async () => {
      const w = samples.length;
      const sample = await probe.sample();
      samples.push(sample);
      ledger.started(starts.splice(0)); // the progress line counts the starts that came while the probe read
      const seconds = (windows[w].endMs - windows[w].startMs) / 1_000;
      log(
        `  ${variant.name}/${scenarioId} t=${fmt(windows[w].endMs / 1_000)}s ${phases[windows[w].phase].name}: enqueued ${fmt(ledger.windowEnqueued[w] / seconds)}/s, started ${fmt(ledger.windowStarted[w] / seconds)}/s, ` +
          `depth ${fmt(sample.depth)}, jobs dead ${fmt(sample.jobsDead)} live ${fmt(sample.jobsLive)}, horizon ${fmt(sample.horizonXids)} xids / ${fmt(sample.oldestXactS)} s`,
      );
    };

    const disturbances = [];
    let disturbance = null;
    closers.push(async () => disturbance?.end());
    for (const [i, phase] of phases.entries()) {
      if (phase.name === 'drain') break;
      rate.setRate(phase.offered, t0 + phase.startMs);
      disturbance = (await phase.disturb?.({ url: db.url, table: variant.jobsTable })) ?? null;
      while (samples.length < windows.length && windows[samples.length].phase === i) {
        await sleepUntil(t0 + windows[samples.length].endMs);
        if (rate.error) throw rate.error;
        await sampleWindow();
      }
      if (disturbance) disturbances.push({ phase: phase.name, ...(await disturbance.end()) });
      disturbance = null;
    }

    // Drain: nothing more is offered after the last phase's scheduled end.
    const drain = phases.at(-1);
    rate.setRate(0, t0 + drain.startMs);
    await rate.stop();
    let left = await db.remaining();
    while (left > 0 && now() < t0 + drain.endMs) {
      if (now() >= t0 + windows[samples.length].endMs) await sampleWindow();
      await sleep(DRAIN_POLL_MS);
      left = await db.remaining();
    }
    const drainEndMs = Math.min(now() - t0, drain.endMs);
    drain.endMs = drainEndMs;
    // The window the drain ended in closes there; the timetable's later ones never happened.
    if (samples.length < windows.length && windows[samples.length].startMs < drainEndMs) {
      windows[samples.length].endMs = drainEndMs;
      await sampleWindow();
    }
    windows.length = samples.length;

    await sleep(200); // the worker reports its starts every 20 ms
    ledger.started(starts.splice(0));

    return {
      system: variant.name,
      variant: variant.variantId,
      label: variant.label,
      settings: variant.settings,
      jobsTable: variant.jobsTable,
      enqueued: ledger.total,
      neverStarted: ledger.neverStarted(),
      repeats: ledger.repeats,
      drain: { seconds: left === 0 ? (drainEndMs - drain.startMs) / 1_000 : null, capped: left > 0, capS: opts.drainCapS, left },
      disturbances,
      phases: phases.map((phase, i) => {
        const seconds = (phase.endMs - phase.startMs) / 1_000;
        const mine = windows.flatMap((w, j) => (w.phase === i ? [j] : []));
        const rates = mine.map((j) => ledger.windowStarted[j] / ((windows[j].endMs - windows[j].startMs) / 1_000));
        const read = (key) => peak(mine.map((j) => samples[j][key]));
        const startedPerSec = seconds > 0 ? ledger.startedIn[i] / seconds : NaN;
        return {
          name: phase.name,
          seconds,
          offered: phase.offered,
          enqueued: ledger.enqueuedIn[i],
          enqueuedPerSec: seconds > 0 ? ledger.enqueuedIn[i] / seconds : NaN,
          startedPerSec,
          startedPerSecWindowMedian: rates.length ? median(rates) : NaN,
          startedVsOffered: phase.offered ? startedPerSec / phase.offered : null,
          pickupMs: ledger.histograms[i].summary(),
          leftAtEnd: ledger.leftAtEnd(i),
          peakDepth: read('depth'),
          peakJobsDead: read('jobsDead'),
          peakSchemaDead: read('schemaDead'),
          peakHorizonXids: read('horizonXids'),
          peakOldestXactS: read('oldestXactS'),
        };
      }),
      windows: windows.map((w, j) => {
        const seconds = (w.endMs - w.startMs) / 1_000;
        return { phase: phases[w.phase].name, endS: w.endMs / 1_000, seconds, enqueuedPerSec: ledger.windowEnqueued[j] / seconds, startedPerSec: ledger.windowStarted[j] / seconds, ...samples[j] };
      }),
    };
  } finally {
    for (const close of closers.reverse()) await close().catch((error) => log(`  ${variant.name}/${scenarioId}: closing: ${error.message}`));
  }
}
