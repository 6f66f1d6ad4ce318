/**
 * The sample app. `npm start` runs it on a SQLite file under sample/data/ (no server needed);
 * with DATABASE_URL set it runs on the server that URL names: postgres:// for PostgreSQL,
 * mysql:// or mariadb:// for MySQL or MariaDB.
 */
import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
// First: the SDK must be registered before anything creates a span.
import { requestSpans, tracingEnabled } from './tracing.js';
import { AppModule } from './app.module.js';
import { sampleDatabase } from './sample-database.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dataDir = join(root, 'sample', 'data');
const databaseUrl = process.env.DATABASE_URL || undefined;
if (!databaseUrl) mkdirSync(dataDir, { recursive: true });

const sqliteFile = process.env.SAMPLE_SQLITE_FILE || join(dataDir, 'sample.db');
// Read first: a DATABASE_URL of no scheme the sample knows stops it before Nest starts.
const database = sampleDatabase(databaseUrl, sqliteFile);
// SAMPLE_WORKER=0 makes a producer-only node; another process (the same sample) runs the jobs.
const worker = process.env.SAMPLE_WORKER !== '0';
const app = await NestFactory.create(AppModule.forRoot({ databaseUrl, sqliteFile, scheduler: { worker } }));
if (tracingEnabled) app.use(requestSpans);
app.enableShutdownHooks();
const port = Number(process.env.PORT ?? 3000);
await app.listen(port);

const base = `http://localhost:${port}`;
const logger = new Logger('Sample');
logger.log(`listening on ${base}, storing jobs in ${database.shown}${tracingEnabled ? ', printing spans' : ''}`);
console.log(`
The dashboard: ${base}/scheduler  (open it in a browser on this machine)

Try these:
  # place an order; the order row and its confirmation job commit together
  curl -s -X POST ${base}/orders -H 'content-type: application/json' -d '{"item":"lamp","quantity":2}'

  # the same, whose confirmation fails once and is retried (with SAMPLE_TRACING=console, see its trace)
  curl -s -X POST ${base}/orders -H 'content-type: application/json' -d '{"item":"lamp","failFirstAttempt":true}'

  # the same, rolled back: neither the order nor the job exists afterwards
  curl -s -X POST '${base}/orders?fail=1' -H 'content-type: application/json' -d '{"item":"lamp"}'

  # look at a job (use a jobId from above) and at its order
  curl -s ${base}/jobs/<jobId>
  curl -s ${base}/orders/<orderId>

  # a one-shot reminder in five seconds (a recurring one fires every minute on its own)
  curl -s -X POST ${base}/reminders -H 'content-type: application/json' -d '{"text":"Call Ada","delayMs":5000}'

  # operate the jobs from another shell (see the README for every command)
  npx durable-scheduler schedules list --conn ${databaseUrl ? '$DATABASE_URL' : `sqlite:${sqliteFile}`}

  # a job that fails twice, then succeeds: watch the retries in this log
  curl -s -X POST ${base}/reports

  # a checkout: reserve stock, then charge, then ship, one step at a time per customer
  curl -s -X POST ${base}/checkouts -H 'content-type: application/json' -d '{"customerId":"c-1","item":"lamp"}'
  curl -s ${base}/checkouts/<checkoutId>

  # a declined card: the charge is dead-lettered (see DEAD LETTER in this log) and shipping is cancelled
  curl -s -X POST ${base}/checkouts -H 'content-type: application/json' -d '{"customerId":"c-1","item":"lamp","paymentMethod":"declined"}'

  # the customer changes the card; then replay the dead-lettered charge on the dashboard's job page
  curl -s -X PUT ${base}/checkouts/<checkoutId>/payment-method -H 'content-type: application/json' -d '{"paymentMethod":"card"}'
`);
