// Builds dist/: compiles lib/ and sample/ with tsc, then copies the SQL migrations and the
// dashboard's stylesheet and script next to the compiled code, because tsc only emits .ts files
// and both are read at run time.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
rmSync(join(root, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});

function copyAssets(dir) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) copyAssets(path);
    else if (entry.endsWith('.sql') || path.includes(join('dashboard', 'assets'))) cpSync(path, join(root, 'dist', relative(root, path)));
  }
}
copyAssets(join(root, 'lib'));

// The CLI is the package's bin entry.
chmodSync(join(root, 'dist', 'lib', 'cli', 'main.js'), 0o755);
