import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * `nestjs-durable-scheduler` and each of its subpaths (`/testing`, `/worker`, ...) mapped to the
 * source of the entry point package.json's `exports` names, so a snippet imports what a user would.
 */
function sourceOfEachEntryPoint(root: string): Record<string, string[]> {
  const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | { types: string }> };
  return Object.fromEntries(
    Object.entries(exports)
      .filter((entry): entry is [string, { types: string }] => typeof entry[1] === 'object')
      .map(([subpath, { types }]) => [join('nestjs-durable-scheduler', subpath), [join(root, types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts'))]]),
  );
}

/**
 * The TypeScript blocks of the README and of the guides in docs/ that start with a file name
 * (`// app.module.ts`) form one small project. It must compile against the library's source, with
 * `nestjs-durable-scheduler` and its subpaths mapped to their entry points in `lib/`, so the docs
 * cannot drift from the API.
 */
describe('README and docs/ snippets', () => {
  it('compile against the current API', () => {
    const root = process.cwd();
    const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => join('docs', name))];
    const blocks = pages.flatMap((page) =>
      [...readFileSync(join(root, page), 'utf8').matchAll(/```ts\n\/\/ ([\w.-]+\.ts)[^\n]*\n([\s\S]*?)```/g)].map((m) => ({ file: m[1]!, code: m[2]! })),
    );
    // One project: two pages may not name the same file.
    expect(new Set(blocks.map((b) => b.file)).size).toBe(blocks.length);
    expect(blocks.map((b) => b.file)).toEqual(
      expect.arrayContaining(['main.ts', 'app.module.ts', 'jobs.ts', 'order.entity.ts', 'job-registry.ts', 'confirm-order.job.ts', 'orders.controller.ts', 'script.ts']),
    );
    // Inside the project, so the snippets resolve the project's node_modules as an application would.
    const dir = mkdtempSync(join(root, 'test', 'docs', '.snippets-'));
    try {
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
      for (const { file, code } of blocks) writeFileSync(join(dir, file), code);
      const program = ts.createProgram(
        blocks.map((b) => join(dir, b.file)),
        {
          target: ts.ScriptTarget.ES2022,
          module: ts.ModuleKind.NodeNext,
          moduleResolution: ts.ModuleResolutionKind.NodeNext,
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
          types: ['node'],
          paths: sourceOfEachEntryPoint(root),
          typeRoots: [join(root, 'node_modules/@types')],
        },
      );
      const diagnostics = ts
        .getPreEmitDiagnostics(program)
        .filter((d) => d.file?.fileName.startsWith(dir) || d.file === undefined)
        .map((d) => `${d.file ? d.file.fileName.slice(dir.length + 1) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
      expect(diagnostics).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
