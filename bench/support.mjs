// Shared plumbing for the benchmarks: a PostgreSQL server (DATABASE_URL, or an embedded one from
// npm), fresh schemas per cell, and small statistics helpers. Benchmarks import the built library
// from dist/, so `npm run bench` builds first.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { startEmbeddedPostgres } from '../scripts/embedded-postgres.mjs';

/** A PostgreSQL URL and a function that stops whatever was started for it. */
export async function postgres() {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, label: 'DATABASE_URL', stop: async () => {} };
  const server = await startEmbeddedPostgres('bench');
  return { ...server, label: 'embedded PostgreSQL' };
}

export async function openDataSource(url, max = 16) {
  return new DataSource({ type: 'postgres', url, extra: { max } }).initialize();
}

export function schemaName(prefix) {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

export function fmt(n, digits = 0) {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** Prints a markdown table: the same text goes to the terminal and into bench/README.md. */
export function table(headers, rows) {
  const lines = [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
  console.log(lines.join('\n'));
}

/**
 * CPU milliseconds used so far by every PostgreSQL process on this machine, counting the backends
 * that already exited (the postmaster's reaped-children time), or null when none is visible (a
 * server on another machine). Bench cells run one at a time, so a difference of two readings is
 * the cell's server CPU, background writers and the bench's own progress probes included.
 */
export function postgresCpuMs() {
  let ticks = 0;
  let seen = false;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      seen = true;
    } catch {}
  }
  return seen ? ticks * 10 : null;
}
