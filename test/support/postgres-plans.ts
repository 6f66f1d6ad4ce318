import pg from 'pg';
import { DataSource } from 'typeorm';
import { databaseUrl } from './postgres.js';

/** One node of a JSON plan. */
export type PlanNode = { 'Node Type': string; Plans?: PlanNode[] } & Record<string, unknown>;

/** Every node of a plan, depth first. */
export function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/**
 * How the plan of a claim statement (as the store sent it) reads `table`: every scan node on it,
 * for worker 'w2' claiming up to `limit` jobs of the queues the statement lists.
 */
export async function claimScans(claimText: string, table: string, limit: number): Promise<Array<{ type: string; index?: string }>> {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  try {
    // The limited claim reads a window ($5) as wide as the batch in its first round.
    const windowed = claimText.includes('$5');
    // The limited claim also takes its turn from a lane and a group ($6 to $8), here none.
    await client.query(`PREPARE claim_plan(text, integer, integer, boolean${windowed ? ', integer, text, text, text' : ''}) AS ${claimText}`);
    const { rows } = await client.query(`EXPLAIN (FORMAT JSON) EXECUTE claim_plan('w2', ${limit}, 60000, true${windowed ? `, ${limit}, null, null, null` : ''})`);
    const relation = table.split('.')[1]!.replaceAll('"', '');
    return nodes((rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan)
      .filter((node) => node['Relation Name'] === relation && node['Node Type'] !== 'ModifyTable')
      .map((node) => ({ type: node['Node Type'], index: node['Index Name'] as string | undefined }));
  } finally {
    await client.end();
  }
}

/** One statement's plan as auto_explain logs it in JSON. */
export type ExplainedPlan = { 'Query Text': string; Plan: PlanNode; Settings?: Record<string, string>; JIT?: unknown };

/**
 * A DataSource whose connections send every statement's plan (auto_explain, JSON) back to this
 * client as a notice; `plans` collects them in order.
 */
export async function explainingDataSource(settings: readonly string[], max: number): Promise<{ explained: DataSource; plans: ExplainedPlan[] }> {
  const options = [
    '-c session_preload_libraries=auto_explain',
    '-c auto_explain.log_min_duration=0',
    '-c auto_explain.log_format=json',
    '-c client_min_messages=log',
    ...settings,
  ].join(' ');
  const explained = await new DataSource({ type: 'postgres', url: databaseUrl(), extra: { max, options } }).initialize();
  const plans: ExplainedPlan[] = [];
  const pool = (explained.driver as unknown as { master: pg.Pool & { _clients?: pg.PoolClient[] } }).master;
  const listen = (client: pg.PoolClient) =>
    client.on('notice', (notice) => {
      const json = notice.message?.replace(/^duration: [\d.]+ ms\s+plan:\s*/, '');
      if (json?.startsWith('{')) plans.push(JSON.parse(json) as ExplainedPlan);
    });
  pool.on('connect', listen);
  for (const client of pool._clients ?? []) listen(client);
  return { explained, plans };
}

/**
 * How the statements `work` sent read `table`, from plans an {@link explainingDataSource} collects:
 * each scan node's type and index; a bitmap scan is named by the indexes under it.
 */
export async function scansOf(plans: ExplainedPlan[], work: () => Promise<unknown>, table: string): Promise<string[]> {
  plans.length = 0;
  await work();
  return plans
    .flatMap((plan) => nodes(plan.Plan))
    .filter((node) => node['Relation Name'] === table && node['Node Type'] !== 'ModifyTable')
    .map((node) => {
      const index = node['Index Name'] ?? nodes(node).map((child) => child['Index Name']).filter(Boolean).join('+');
      return index ? `${node['Node Type']} ${String(index)}` : node['Node Type'];
    });
}
