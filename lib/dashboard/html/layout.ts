import { html, href, type SafeHtml } from './html.js';

/** What every page needs besides its data. */
export interface PageContext {
  /** The mount point as the browser sees it. */
  readonly base: string;
  /** The store's clock when the page's data was read; relative times count from it. */
  readonly now: Date;
  readonly readOnly: boolean;
  /** The token every action form carries. */
  readonly csrf: string;
  /** A one-line result of the action that led here, if any. */
  readonly notice?: string | null;
}

const SECTIONS: readonly (readonly [string, string])[] = [
  ['', 'Overview'],
  ['jobs', 'Jobs'],
  ['dead-letters', 'Dead letters'],
  ['sequences', 'Sequences'],
  ['batches', 'Batches'],
  ['groups', 'Groups'],
  ['schedules', 'Schedules'],
  ['limits', 'Limits'],
  ['workers', 'Workers'],
  ['observers', 'Observers'],
  ['audit', 'Audit'],
  ['guarantees', 'Guarantees'],
];

/**
 * The page shell: navigation, the read-only badge, the notice of the last action, and links to
 * the dashboard's own icon, stylesheet and script (the only ones the Content-Security-Policy allows).
 */
export function layout(ctx: PageContext, section: string, title: string, body: SafeHtml): SafeHtml {
  const nav = SECTIONS.map(
    ([path, label]) => html`<a href="${path ? href(ctx.base, [path]) : ctx.base || '/'}"${section === path ? html` aria-current="page"` : ''}>${label}</a>`,
  );
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · durable scheduler</title>
<link rel="icon" type="image/svg+xml" href="${href(ctx.base, ['assets', 'favicon.svg'])}">
<link rel="stylesheet" href="${href(ctx.base, ['assets', 'dashboard.css'])}">
<script src="${href(ctx.base, ['assets', 'dashboard.js'])}" defer></script>
</head>
<body>
<header><strong class="brand">durable scheduler</strong><nav>${nav}</nav>${ctx.readOnly ? html`<span class="badge">read-only</span>` : ''}</header>
<main>
${ctx.notice ? html`<p class="notice" role="status">${ctx.notice}</p>` : ''}
<h1>${title}</h1>
${body}
</main>
<footer>Times are UTC unless a time zone is named. Page drawn at ${formatTime(ctx.now)}.</footer>
</body>
</html>
`;
}

/** An instant as `2026-12-02 06:40:12` (UTC), or a dash. */
export function formatTime(at: Date | null | undefined): string {
  if (!at) return '—';
  return at.toISOString().replace('T', ' ').slice(0, 19);
}

/** How far an instant is from `now`: `in 4 s`, `3 min ago`. */
export function relativeTime(at: Date | null | undefined, now: Date): string {
  if (!at) return '—';
  const ms = at.getTime() - now.getTime();
  const abs = Math.abs(ms);
  const amount = abs < 60_000 ? `${Math.round(abs / 1000)} s` : abs < 3_600_000 ? `${Math.round(abs / 60_000)} min` : abs < 172_800_000 ? `${Math.round(abs / 3_600_000)} h` : `${Math.round(abs / 86_400_000)} d`;
  return ms >= 0 ? `in ${amount}` : `${amount} ago`;
}

/** A time with its relative form as a tooltip-free second line. */
export function timeCell(at: Date | null | undefined, now: Date): SafeHtml {
  if (!at) return html`—`;
  return html`<time datetime="${at.toISOString()}">${formatTime(at)}</time> <small>${relativeTime(at, now)}</small>`;
}

/** A state as a coloured label. */
export function stateBadge(state: string): SafeHtml {
  return html`<span class="state state-${state.replace(/[^a-z_]/g, '')}">${state.replace(/_/g, ' ')}</span>`;
}

/** A hidden field with the CSRF token, for every action form. */
export function csrfField(ctx: PageContext): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrf}">`;
}
