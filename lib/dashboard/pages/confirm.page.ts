import { html, type SafeHtml } from '../html/html.js';
import { csrfField, layout, type PageContext } from '../html/layout.js';

/** An action waiting for the operator's yes. */
export interface Confirmation {
  readonly section: string;
  /** e.g. "Cancel this job?" */
  readonly question: string;
  /** What will happen, in one or two sentences. */
  readonly consequence: string;
  /** The POST target. */
  readonly action: string;
  /** The label of the confirming button. */
  readonly verb: string;
  /**
   * How the button looks: `danger` (red) for what cannot be taken back, a cancel or a discard;
   * `primary` for the rest (replay, run now, pause, resume, trigger), which an operator can undo or
   * which only makes work due.
   */
  readonly tone: 'danger' | 'primary';
  /** Where "Back" leads. */
  readonly back: string;
  /** Extra hidden fields (a bulk action's ids). */
  readonly fields?: readonly (readonly [string, string])[];
  /** What the action applies to, listed for the operator to check. */
  readonly targets?: readonly SafeHtml[];
}

/**
 * Every action asks first: its link leads here, and only this page's POST form performs it. The
 * question needs no script, so it holds with JavaScript off and under the strict policy.
 */
export function confirmPage(ctx: PageContext, confirmation: Confirmation): SafeHtml {
  const body = html`<form class="confirm" method="post" action="${confirmation.action}">
${csrfField(ctx)}
${(confirmation.fields ?? []).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<p>${confirmation.consequence}</p>
${confirmation.targets?.length ? html`<ul class="targets">${confirmation.targets.map((target) => html`<li>${target}</li>`)}</ul>` : ''}
<p><button type="submit" class="${confirmation.tone}">${confirmation.verb}</button> <a href="${confirmation.back}">Back</a></p>
</form>`;
  return layout(ctx, confirmation.section, confirmation.question, body);
}
