import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createOracles } from '../../lib/simulator/oracles/index.js';

const readme = () => readFileSync(join(process.cwd(), 'README.md'), 'utf8').replace(/\s+/g, ' ');
const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty'];

describe('the README\'s factual claims', () => {
  it('issue 19 workerfix 4: counts the simulator\'s oracles as many as it runs', () => {
    const count = createOracles(new Map(), { shutdownBoundMs: 1_000 }).all.length;
    // A number in words may be compound: twenty-one is twenty and one.
    const inWords = (word: string) => word.split('-').every((part) => WORDS.includes(part));
    const claims = [...readme().matchAll(/\b((?:\w+-)?\w+) oracles\b/g)].map((m) => m[1]!.toLowerCase()).filter((word) => inWords(word) || /^\d+$/.test(word));
    expect(claims.length).toBeGreaterThanOrEqual(1);
    expect(claims.map((word) => (/^\d+$/.test(word) ? Number(word) : word.split('-').reduce((sum, part) => sum + WORDS.indexOf(part), 0)))).toEqual(claims.map(() => count));
  });

  it('issue 19 workerfix 4: describes the CommonJS set-up that test/package/commonjs-app.spec.ts boots', () => {
    const fixture = JSON.parse(readFileSync(join(process.cwd(), 'test/fixtures/commonjs-app/tsconfig.json'), 'utf8')) as { compilerOptions: { module: string; moduleResolution: string } };
    const text = readme();
    expect(text).toContain('needs Node 20.19 or later');
    const claim = /An app compiled to CommonJS \(([^)]*)\) loads it with `require\(\)`/.exec(text);
    expect(claim).not.toBeNull();
    expect(claim![1]).toContain('without `"type": "module"`');
    expect(claim![1]).toContain(`set to \`${fixture.compilerOptions.module}\``);
    expect(fixture.compilerOptions.moduleResolution).toBe(fixture.compilerOptions.module);
  });
});
