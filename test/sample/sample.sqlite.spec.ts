import { describe } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleCases } from './sample.cases.js';

describe('the sample app on SQLite (npm start)', () => {
  sampleCases(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-sample-'));
    return {
      env: { SAMPLE_SQLITE_FILE: join(dir, 'sample.db'), DATABASE_URL: '' },
      conn: `sqlite:${join(dir, 'sample.db')}`,
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  });
});
