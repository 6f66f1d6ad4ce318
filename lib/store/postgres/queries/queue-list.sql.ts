import { assertQueueName } from '../../../core/index.js';

/**
 * A worker's queue names as a constant `text[]` written into a claim statement's text, sorted and
 * without repeats, so two workers serving the same queues share one prepared statement.
 *
 * Constant, because PostgreSQL (14 and later) tests a row against a constant array of 9 or more
 * elements through a hash table built once per execution, where an array computed at run time (a
 * parameter, an InitPlan) is compared element by element for every row the claim reads.
 *
 * Every name is checked again here, so nothing reaches the text that is not a queue name (letters,
 * digits and `_ . : -`: no quote, backslash, comma, brace or space). Each is still written as a
 * double-quoted array element, so a queue named `NULL` is that text and not a null, and the whole
 * literal as a single-quoted SQL string.
 */
export function queueListLiteral(queues: readonly string[]): string {
  const names = [...new Set(queues.map((queue, i) => assertQueueName(queue, `queues[${i}]`)))].sort();
  return `'{${names.map((name) => `"${name}"`).join(',')}}'::text[]`;
}

/** How many queue lists a store keeps statements for; a worker's list is fixed when it starts. */
const LISTS_KEPT = 32;

/**
 * Builds what `build` makes from a queue list's literal once per list, and keeps it for the
 * {@link LISTS_KEPT} lists seen last, so a claim sends the same text each time and each pooled
 * connection prepares it once. The key is the list as asked for, in JSON so that no two lists share
 * one; lists that differ only in order or repeats build the same text, and share its statement.
 *
 * A worker passes the same array to every claim, so the array itself is remembered too, with a copy
 * of its names: finding it again costs a comparison of references, where the JSON key of 1,000
 * names is some 10 kB to write and hash on every claim. The copy catches an array changed in place;
 * a frozen array (a worker's resolved options) cannot change, so its names are not compared again.
 */
export function perQueueList<T>(build: (listed: string) => T): (queues: readonly string[]) => T {
  const kept = new Map<string, T>();
  const byArray = new WeakMap<readonly string[], { readonly names: readonly string[]; readonly built: T }>();
  const byKey = (queues: readonly string[]): T => {
    const key = JSON.stringify(queues);
    let built = kept.get(key);
    if (built === undefined) {
      built = build(queueListLiteral(queues));
      if (kept.size >= LISTS_KEPT) kept.delete(kept.keys().next().value!);
      kept.set(key, built);
    }
    return built;
  };
  return (queues) => {
    const seen = byArray.get(queues);
    if (seen !== undefined && (Object.isFrozen(queues) || sameNames(seen.names, queues))) return seen.built;
    const built = byKey(queues);
    byArray.set(queues, { names: [...queues], built });
    return built;
  };
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
