import type { JobThroughput } from '../../store/index.js';
import { html, type SafeHtml } from './html.js';
import { formatTime } from './layout.js';

const WIDTH = 600;
const HEIGHT = 140;
const TOP = 10;
const BOTTOM = 20;
/** Room on the left for the scale's numbers. */
const LEFT = 44;
const RIGHT = 4;

const OUTCOMES = [
  ['succeeded', 'succeeded'],
  ['dead_lettered', 'dead-lettered'],
  ['cancelled', 'cancelled'],
] as const;

/** The smallest 1, 2 or 5 times a power of ten at or above `n`: a scale whose lines fall on round numbers. */
export function roundScale(n: number): number {
  if (n <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 5, 10].map((step) => step * power).find((top) => top >= n)!;
}

/**
 * Finished jobs per bucket as an inline SVG bar chart, stacked by how they ended, on a scale with
 * round lines and labelled minutes, and a legend of the outcomes' colours beneath. The markup is
 * the dashboard's own (no script, no inline style), so the page's policy needs no exception; each
 * bar carries its counts as a title for a pointer to show.
 */
export function throughputChart(throughput: JobThroughput, label: string): SafeHtml {
  const buckets = throughput.buckets;
  const totals = buckets.map((bucket) => bucket.succeeded + bucket.deadLettered + bucket.cancelled);
  const top = roundScale(Math.max(...totals, 0));
  const plot = WIDTH - LEFT - RIGHT;
  const slot = plot / Math.max(1, buckets.length);
  const base = HEIGHT - BOTTOM;
  const scale = (base - TOP) / top;
  const bars = buckets.map((bucket, i) => {
    const x = (LEFT + i * slot + 0.5).toFixed(1);
    const w = Math.max(1, slot - 1).toFixed(1);
    let y = base;
    const parts = OUTCOMES.map(([kind]) => {
      const count = kind === 'succeeded' ? bucket.succeeded : kind === 'dead_lettered' ? bucket.deadLettered : bucket.cancelled;
      if (count === 0) return '';
      const h = count * scale;
      y -= h;
      return html`<rect class="bar-${kind}" x="${x}" y="${y.toFixed(1)}" width="${w}" height="${h.toFixed(1)}"></rect>`;
    });
    return html`<g><title>${formatTime(bucket.start)}: ${bucket.succeeded} succeeded, ${bucket.deadLettered} dead-lettered, ${bucket.cancelled} cancelled</title>${parts}</g>`;
  });
  // Lines at 0, half the scale (when it is a whole number) and the top, each with its number.
  const levels = [0, ...(top % 2 === 0 ? [top / 2] : []), top];
  const grid = levels.map((level) => {
    const y = (base - level * scale).toFixed(1);
    return html`<line class="${level === 0 ? 'axis' : 'grid'}" x1="${LEFT}" y1="${y}" x2="${WIDTH - RIGHT}" y2="${y}"></line><text x="${LEFT - 4}" y="${(Number(y) + 3).toFixed(1)}" class="tick end">${level.toLocaleString('en-US')}</text>`;
  });
  // A label every quarter of the window, counted back from the newest bucket.
  const minutes = buckets.length;
  const marks = [0, 15, 30, 45]
    .filter((ago) => ago < minutes)
    .map((ago) => {
      const x = (LEFT + (minutes - 1 - ago + 0.5) * slot).toFixed(1);
      return html`<text x="${x}" y="${HEIGHT - 5}" class="tick mid">${ago === 0 ? 'now' : `${ago} min ago`}</text>`;
    });
  const total = totals.reduce((sum, n) => sum + n, 0);
  const last = totals.at(-1) ?? 0;
  return html`<figure class="chart">
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${label}: ${total} jobs finished in the last hour, per minute, on a scale up to ${top} a minute" xmlns="http://www.w3.org/2000/svg">
${grid}
${bars}
<text x="2" y="${TOP - 1}" class="tick">jobs/min</text>
${marks}
</svg>
<ul class="legend">${OUTCOMES.map(([kind, name]) => html`<li><span class="swatch swatch-${kind}"></span>${name}</li>`)}</ul>
<figcaption>${label}: ${total} finished in the last hour, ${last} so far this minute${throughput.partialUntil ? html`; counts before ${formatTime(throughput.partialUntil)} are lower bounds (the read stops after the newest 50,000 finished jobs)` : ''}.</figcaption>
</figure>`;
}
