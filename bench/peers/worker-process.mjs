// One worker process of a cell. argv[2] is JSON: { system, url, settings, mode, keys, pool }.
// mode: 'noop' (return at once), 'fail-twice' (throw on a key's first two attempts), 'hang'
// (never return: the crash cell's victim), 'fail-once' (throw on a key's first attempt), 'snooze-once'
// (ours only: snooze each job once, for 0 ms, then succeed). It reports handler starts to the runner every 20 ms, and
// on 'stop' stops its worker and reports its CPU time and peak RSS.
import { performance } from 'node:perf_hooks';
import { systems } from '../systems/index.mjs';

const config = JSON.parse(process.argv[2]);
const system = systems[config.system];
const now = () => performance.timeOrigin + performance.now();
let count = 0;
let first = 0;
let starts = [];
const attempts = new Map();
let peakRss = process.memoryUsage().rss;

function handler(payload, _attempt, context) {
  count += 1;
  if (!first) first = now();
  if (config.keys) {
    starts.push([payload.k, now()]);
    if (starts.length === 1) setImmediate(flush); // serial latency cells wait on this report
  }
  if (config.mode === 'hang') return new Promise(() => {});
  if (config.mode === 'snooze-once' && context.snoozes === 0) return context.snooze(0);
  if (config.mode === 'fail-once') {
    const seen = (attempts.get(payload.k) ?? 0) + 1;
    attempts.set(payload.k, seen);
    if (seen < 2) return Promise.reject(new Error('planned failure'));
  }
  if (config.mode === 'fail-twice') {
    const seen = (attempts.get(payload.k) ?? 0) + 1;
    attempts.set(payload.k, seen);
    if (seen < 3) return Promise.reject(new Error(`planned failure ${seen}`));
  }
  return undefined;
}

const flush = () => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  if (!process.connected) return;
  process.send({ type: 'progress', count, first, starts });
  starts = [];
};
const timer = setInterval(flush, 20);
const cpu0 = process.cpuUsage();
const worker = await system.worker(config.url, config.settings, handler, config.pool);
process.send({ type: 'ready' });

process.on('message', async (message) => {
  if (message.type !== 'stop') return;
  await Promise.race([worker.stop(), new Promise((resolve) => setTimeout(resolve, 5_000))]);
  clearInterval(timer);
  flush();
  const cpu = process.cpuUsage(cpu0);
  const histogram = {};
  for (const n of attempts.values()) histogram[n] = (histogram[n] ?? 0) + 1;
  process.send({ type: 'stopped', cpuMs: (cpu.user + cpu.system) / 1_000, peakRss, attempts: histogram }, () => process.exit(0));
});
