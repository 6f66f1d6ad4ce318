import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LATEST_SCHEMA_VERSION } from '../../lib/store/index.js';

describe('the CLI guide\'s transcript (docs/cli.md)', () => {
  it('issue 19 item 15: names the schema version migrate reaches today', () => {
    const guide = readFileSync(join(process.cwd(), 'docs', 'cli.md'), 'utf8');
    const versions = [...guide.matchAll(/from schema version \d+ to (\d+)\.|is already at schema version (\d+)\./g)].map((m) => Number(m[1] ?? m[2]));
    expect(versions.length).toBeGreaterThanOrEqual(2);
    expect(versions).toEqual(versions.map(() => LATEST_SCHEMA_VERSION));
  });
});
