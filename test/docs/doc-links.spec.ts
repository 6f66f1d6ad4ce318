import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { anchors, relativeLinks } from '../support/markdown-links.js';

/** The pages a reader moves between: the README, the architecture guide, the guides and the bench. */
function pages(root: string): string[] {
  const docs = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => join('docs', name));
  return ['README.md', 'ARCHITECTURE.md', join('bench', 'README.md'), ...docs].filter((page) => existsSync(join(root, page)));
}

describe('links in the README and docs/', () => {
  it('point at files that exist, and at headings those files have', () => {
    const root = process.cwd();
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages(root)) {
      const text = readFileSync(join(root, page), 'utf8');
      for (const target of relativeLinks(text)) {
        checked += 1;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file = path === '' ? join(root, page) : join(root, dirname(page), decodeURIComponent(path));
        if (!existsSync(file)) {
          broken.push(`${page}: ${target} (no such file)`);
          continue;
        }
        if (anchor === undefined || statSync(file).isDirectory()) continue;
        if (!file.endsWith('.md') || !anchors(readFileSync(file, 'utf8')).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor} in ${relative(root, file)})`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });
});
