import type { IncomingMessage } from 'node:http';

/** A request as the dashboard's pages and actions see it, after routing and security checks. */
export interface DashboardRequest {
  readonly method: 'GET' | 'POST';
  /** Path segments below the mount point, decoded. */
  readonly segments: readonly string[];
  readonly query: URLSearchParams;
  /** The form fields of a POST (urlencoded); empty for a GET. */
  readonly form: URLSearchParams;
  /** The mount point as the browser sees it, e.g. `/scheduler` or `/api/scheduler`. */
  readonly base: string;
  /** Who acts, for the audit log. */
  readonly actor: string;
}

/** The largest form the dashboard reads: a bulk action's ids fit many times over. */
const MAX_FORM_BYTES = 256 * 1024;

/** Thrown for a request the dashboard refuses; the handler turns it into a page with that status. */
export class DashboardHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'DashboardHttpError';
  }
}

/**
 * The form fields of a POST. A host app on @nestjs/platform-express has usually parsed them into
 * `req.body` already; otherwise (the standalone server, or a host with its body parser off) the
 * stream is read here, up to {@link MAX_FORM_BYTES}.
 */
export async function readForm(req: IncomingMessage & { body?: unknown }): Promise<URLSearchParams> {
  const parsed = req.body;
  if (parsed && typeof parsed === 'object' && !Buffer.isBuffer(parsed)) {
    const form = new URLSearchParams();
    for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
      for (const item of Array.isArray(value) ? value : [value]) if (typeof item === 'string') form.append(key, item);
    }
    return form;
  }
  if (req.readableEnded) return new URLSearchParams();
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded')) throw new DashboardHttpError(415, 'Dashboard actions take a urlencoded form.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new DashboardHttpError(413, `A dashboard form may hold at most ${MAX_FORM_BYTES} bytes.`);
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * The request's address, parsed without a base to resolve against: `//x` stays a path instead of
 * failing as a host-less URL, and anything unparsable reads as `/`. Never throws.
 */
export function requestUrl(req: { readonly url?: string; readonly originalUrl?: string }): URL {
  const raw = req.originalUrl ?? req.url ?? '/';
  try {
    return new URL(`http://dashboard.invalid${raw.startsWith('/') ? raw : `/${raw}`}`);
  } catch {
    return new URL('http://dashboard.invalid/');
  }
}

/** Splits a path below the mount point into decoded segments, refusing malformed escapes. */
export function splitSegments(rest: string): string[] {
  const segments = rest.split('/').filter((segment) => segment !== '');
  try {
    return segments.map((segment) => decodeURIComponent(segment));
  } catch {
    throw new DashboardHttpError(400, 'The address has a malformed percent-encoding.');
  }
}
