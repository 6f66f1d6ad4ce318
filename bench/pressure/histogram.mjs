// A latency histogram of fixed size, whatever the run's length: a pressure run starts a few hundred
// thousand jobs, and keeping every pickup time to sort at the end grows with the run. Buckets grow
// by 2 % from 0.1 ms to 1 hour (~880 counters); a percentile is the geometric middle of its bucket,
// so within 1 % of the exact value, and never outside the exact min and max.
// `node bench/pressure/histogram.mjs` checks it against exact percentiles of random samples.
import { pathToFileURL } from 'node:url';

const LOW = 0.1; // ms: bucket 0 holds everything below (and clock-skew negatives)
const HIGH = 3_600_000; // ms: the last bucket holds everything above
const GROWTH = 1.02;
const LOG_GROWTH = Math.log(GROWTH);
const BUCKETS = Math.ceil(Math.log(HIGH / LOW) / LOG_GROWTH) + 2;

export class Histogram {
  counts = new Float64Array(BUCKETS);
  count = 0;
  sum = 0;
  min = Infinity;
  max = -Infinity;

  add(ms) {
    const i = ms < LOW ? 0 : Math.min(BUCKETS - 1, 1 + Math.floor(Math.log(ms / LOW) / LOG_GROWTH));
    this.counts[i] += 1;
    this.count += 1;
    this.sum += ms;
    if (ms < this.min) this.min = ms;
    if (ms > this.max) this.max = ms;
  }

  merge(other) {
    for (let i = 0; i < BUCKETS; i++) this.counts[i] += other.counts[i];
    this.count += other.count;
    this.sum += other.sum;
    this.min = Math.min(this.min, other.min);
    this.max = Math.max(this.max, other.max);
    return this;
  }

  /** The p-th percentile (0–100), NaN when empty. */
  percentile(p) {
    if (this.count === 0) return NaN;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    if (rank >= this.count) return this.max;
    let seen = 0;
    let i = 0;
    while (seen + this.counts[i] < rank) seen += this.counts[i++];
    if (i === BUCKETS - 1) return this.max; // beyond the range: the max is the only bound known
    const middle = i === 0 ? LOW / 2 : LOW * GROWTH ** (i - 0.5);
    return Math.min(this.max, Math.max(this.min, middle));
  }

  summary() {
    const at = (p) => this.percentile(p);
    return { count: this.count, mean: this.count ? this.sum / this.count : NaN, p50: at(50), p95: at(95), p99: at(99), p999: at(99.9), max: this.count ? this.max : NaN };
  }
}

function selfTest() {
  const exact = (sorted, p) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
  // Log-normal around 20 ms with a long tail, plus a few sub-resolution and beyond-range values.
  const samples = Array.from({ length: 200_000 }, () => Math.exp(3 + 2 * Math.sqrt(-2 * Math.log(Math.random())) * Math.cos(2 * Math.PI * Math.random())));
  samples.push(0, -1, 0.05, 5_000_000);
  const a = new Histogram();
  const b = new Histogram();
  samples.forEach((v, i) => (i % 2 ? a : b).add(v));
  const h = a.merge(b);
  const sorted = [...samples].sort((x, y) => x - y);
  if (h.count !== samples.length) throw new Error(`count ${h.count} != ${samples.length}`);
  if (h.max !== 5_000_000 || h.min !== -1) throw new Error(`min/max ${h.min}/${h.max}`);
  for (const p of [1, 50, 90, 95, 99, 99.9]) {
    const want = exact(sorted, p);
    const got = h.percentile(p);
    if (Math.abs(got / want - 1) > 0.0101) throw new Error(`p${p}: ${got} vs exact ${want}`);
  }
  if (h.percentile(100) !== 5_000_000) throw new Error('p100 is not the max');
  if (!Number.isNaN(new Histogram().percentile(50))) throw new Error('empty histogram');
  console.log(`histogram self-test passed: ${BUCKETS} buckets, ${samples.length} samples, percentiles within 1 % of exact`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) selfTest();
