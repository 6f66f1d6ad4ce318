// The systems a pressure run can name (--systems), each an existing variant of bench/systems at
// the run's concurrency, and the table whose tuples the probe and the readers look at.
// ours is ours-tuned: at c = 32, { concurrency: 32, claimBatchSize: 32, asyncClaimCommit: true },
// the setting of the measurement this section reproduces.
import { unsupported, variants } from '../systems/index.mjs';

const table = { ours: 'durable_scheduler.jobs', graphile: 'graphile_worker._private_jobs', pgboss: 'pgboss.job' };
const chosen = { ours: 'ours-tuned', 'ours-default': 'ours-default', graphile: 'graphile-tuned', pgboss: 'pgboss-tuned' };

const names = Object.keys(chosen);

/** { name, variantId, system, label, settings, jobsTable, unsupported } for --systems name at concurrency c. */
export function pressureVariant(name, c) {
  const variantId = chosen[name];
  if (!variantId) throw new Error(`--systems: no system ${name}; known: ${names.join(', ')}`);
  const variant = variants[variantId];
  return { name, variantId, system: variant.system, label: variant.label, settings: variant.settings(c), jobsTable: table[variant.system], unsupported: unsupported(variantId, c) };
}
