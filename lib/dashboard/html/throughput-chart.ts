import type { JobThroughput } from '../../store/index.js';
import { html, type SafeHtml } from './html.js';
import { formatTime } from './layout.js';

const WIDTH = 600;
const HEIGHT = 120;
const TOP = 8;
const BOTTOM = 18;

/**
 * Finished jobs per bucket as an inline SVG bar chart, stacked by how they ended. The markup is
 * the dashboard's own (no script, no inline style), so the page's policy needs no exception; each
 * bar carries its counts as a title for a pointer to show.
 */
export function throughputChart(throughput: JobThroughput, label: string): SafeHtml {
  const buckets = throughput.buckets;
  const totals = buckets.map((bucket) => bucket.succeeded + bucket.deadLettered + bucket.cancelled);
  const max = Math.max(1, ...totals);
  const slot = WIDTH / Math.max(1, buckets.length);
  const scale = (HEIGHT - TOP - BOTTOM) / max;
  const bars = buckets.map((bucket, i) => {
    const x = (i * slot + 0.5).toFixed(1);
    const w = Math.max(1, slot - 1).toFixed(1);
    let y = HEIGHT - BOTTOM;
    const parts = (
      [
        ['succeeded', bucket.succeeded],
        ['dead_lettered', bucket.deadLettered],
        ['cancelled', bucket.cancelled],
      ] as const
    ).map(([kind, count]) => {
      if (count === 0) return '';
      const h = count * scale;
      y -= h;
      return html`<rect class="bar-${kind}" x="${x}" y="${y.toFixed(1)}" width="${w}" height="${h.toFixed(1)}"></rect>`;
    });
    return html`<g><title>${formatTime(bucket.start)}: ${bucket.succeeded} succeeded, ${bucket.deadLettered} dead-lettered, ${bucket.cancelled} cancelled</title>${parts}</g>`;
  });
  const total = totals.reduce((sum, n) => sum + n, 0);
  const last = totals.at(-1) ?? 0;
  return html`<figure class="chart">
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${label}: ${total} jobs finished in the last hour" xmlns="http://www.w3.org/2000/svg">
<line class="axis" x1="0" y1="${HEIGHT - BOTTOM}" x2="${WIDTH}" y2="${HEIGHT - BOTTOM}"></line>
${bars}
<text x="2" y="${TOP + 2}" class="tick">${max}/min</text>
<text x="2" y="${HEIGHT - 4}" class="tick">60 min ago</text>
<text x="${WIDTH - 2}" y="${HEIGHT - 4}" class="tick end">now</text>
</svg>
<figcaption>${label}: ${total} finished in the last hour, ${last} so far this minute${throughput.partialUntil ? html`; counts before ${formatTime(throughput.partialUntil)} are lower bounds (the read stops after the newest 50,000 finished jobs)` : ''}.</figcaption>
</figure>`;
}
