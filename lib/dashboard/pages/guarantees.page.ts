import { rangeText, VERIFY_RULES, type VerifyRun } from '../../verify/index.js';
import { html, href, type SafeHtml } from '../html/html.js';
import { layout, timeCell, type PageContext } from '../html/layout.js';

/** How many recorded runs the page lists. */
export const GUARANTEE_RUNS_SHOWN = 10;

const n = (value: number) => value.toLocaleString('en-US');

const range = (run: VerifyRun) => rangeText(run.since, run.until);

function found(run: VerifyRun): SafeHtml {
  if (run.checked.entries === 0) return html`<span class="muted">nothing to check</span>`;
  if (run.violationCount === 0) return html`<span class="state state-succeeded">none broken</span>`;
  return html`<span class="state state-dead_lettered">${n(run.violationCount)} broken</span>`;
}

/** The newest run in full: what it checked, each violation it kept, and what it could not check. */
function lastRun(ctx: PageContext, run: VerifyRun): SafeHtml {
  const c = run.checked;
  const kept = run.violations.length < run.violationCount ? html`<p>The first ${n(run.violations.length)} of ${n(run.violationCount)} are kept here; <code>durable-scheduler verify</code> lists them all.</p>` : '';
  const violations =
    run.violationCount === 0
      ? html`<p>No promise was broken.</p>`
      : html`${kept}<div class="scroll"><table id="violations">
<thead><tr><th>Rule</th><th>Job</th><th>Entries</th><th>What</th></tr></thead>
<tbody>${run.violations.map(
          (v) => html`<tr><td><code>${v.rule}</code></td><td><a class="id" href="${href(ctx.base, ['jobs', v.jobId])}">${v.jobId}</a></td><td>${v.entryIds.join(', ')}</td><td>${v.message}</td></tr>`,
        )}</tbody></table></div>`;
  return html`<section id="last-run"><h2>Last run</h2>
<p>${timeCell(run.at, ctx.now)}, by <code>${run.actor}</code>, over ${range(run)}: ${found(run)}.</p>
<p>Checked ${n(c.entries)} history entries of ${n(c.jobs)} jobs: ${n(c.transitions)} changes of state, ${n(c.attempts)} attempts, ${n(c.leases)} ends of a lease, ${n(c.releases)} releases of a dependant, ${n(c.capStarts)} starts under a concurrency limit, ${n(c.rateStarts)} under a rate, ${n(c.uniqueKeysTaken)} unique keys taken, ${n(c.occurrencesMinted)} occurrences minted${run.until === null ? html`, and ${n(c.jobsCompared)} stored jobs compared with their history` : ''}.</p>
${violations}
${run.notChecked.length === 0 ? '' : html`<h3>Not checked</h3><ul>${run.notChecked.map((line) => html`<li>${line}</li>`)}</ul>`}
</section>`;
}

/**
 * What `verify` found in this store's own history (docs/verify.md): the last recorded run in full,
 * the runs before it, and the promises each rule checks. Runs are recorded in the audit log by the
 * CLI and by the module's scheduled verify; the page runs none itself, since a run reads the whole
 * history.
 */
export function guaranteesPage(ctx: PageContext, runs: readonly VerifyRun[]): SafeHtml {
  const [last] = runs;
  const none = html`<p id="no-run">No verify run is on record for this store. Run <code>durable-scheduler verify --conn …</code> against it, or set the module's <code>verify</code> option to verify on one node on a schedule; each run is recorded here.</p>`;
  const earlier =
    runs.length === 0
      ? ''
      : html`<h2>Recorded runs</h2><div class="scroll"><table id="runs">
<thead><tr><th>Finished</th><th>By</th><th>Range</th><th>Entries</th><th>Jobs</th><th>Found</th></tr></thead>
<tbody>${runs.map((run) => html`<tr><td>${timeCell(run.at, ctx.now)}</td><td><code>${run.actor}</code></td><td>${range(run)}</td><td class="num">${n(run.checked.entries)}</td><td class="num">${n(run.checked.jobs)}</td><td>${found(run)}</td></tr>`)}</tbody>
</table></div>`;
  const body = html`<p>Whether the scheduler kept its promises, as <code>verify</code> reads them from this store's own history: every change of state one the lifecycle allows, no attempt with two outcomes, every outcome from the worker holding the live lease, no job lost. The page shows the last ${GUARANTEE_RUNS_SHOWN} recorded runs; it runs none itself.</p>
${last === undefined ? none : lastRun(ctx, last)}
${earlier}
<h2>The rules</h2>
<div class="scroll"><table id="rules"><thead><tr><th>Rule</th><th>The promise</th></tr></thead>
<tbody>${VERIFY_RULES.map((r) => html`<tr><td><code>${r.rule}</code></td><td>${r.promise}</td></tr>`)}</tbody></table></div>`;
  return layout(ctx, 'guarantees', 'Guarantees', body);
}
