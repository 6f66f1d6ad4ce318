// Each statement's plan as actually sent, with EXPLAIN (ANALYZE, BUFFERS) figures: auto_explain on
// a DataSource of its own (test/support/postgres-plans.ts does the same in JSON), each plan
// arriving as a notice. Nested statements are logged too, so the plans inside the settle function
// and the effects triggers show up under the statement that ran them. Timings never come from this
// connection: auto_explain's instrumentation slows what it measures.
import { statementList } from './statements.mjs';

const AUTO_EXPLAIN = [
  '-c session_preload_libraries=auto_explain',
  '-c auto_explain.log_min_duration=0',
  '-c auto_explain.log_analyze=on',
  '-c auto_explain.log_buffers=on',
  '-c auto_explain.log_nested_statements=on',
  '-c auto_explain.log_triggers=on',
  '-c client_min_messages=log',
].join(' ');

/** Runs every statement once on an explaining connection; returns `[{ name, plans: [text] }]`. */
export async function capturePlans({ library, url, query, base }) {
  const { dataSource, store, close } = await library.open(url, { max: 4, pgOptions: AUTO_EXPLAIN });
  const notices = [];
  const pool = dataSource.driver.master;
  const listen = (client) => client.on('notice', (n) => n.message?.startsWith('duration:') && notices.push(n.message));
  pool.on('connect', listen);
  for (const client of pool._clients ?? []) listen(client);
  const captured = [];
  try {
    for (const statement of await statementList({ store, query, base })) {
      if (statement.missing) continue;
      try {
        await statement.setup?.();
        await statement.before?.();
        notices.length = 0;
        await statement.run();
        captured.push({ name: statement.name, plans: [...notices] });
      } catch (error) {
        captured.push({ name: statement.name, plans: [], error: String(error?.message ?? error).split('\n')[0] });
      }
    }
  } finally {
    await close();
  }
  return captured;
}

/** The plans file: a heading per statement, its plans in a fenced block. */
export function plansText(captured, heading) {
  const parts = [`# ${heading}`, ''];
  for (const { name, plans, error } of captured) {
    parts.push(`## ${name}`, '');
    if (error) parts.push(`(failed: ${error})`, '');
    parts.push('```', ...(plans.length ? plans : ['(no plan logged)']).flatMap((p) => [p.trimEnd(), '']), '```', '');
  }
  return parts.join('\n');
}
