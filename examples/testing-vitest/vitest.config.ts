import { defineConfig } from 'vitest/config';

// Vite 8 compiles TypeScript with Oxc, which reads experimentalDecorators and
// emitDecoratorMetadata from tsconfig.json: Nest's constructor injection works with no plugin.
export default defineConfig({
  test: {
    include: ['src/**/*.spec.ts'],
  },
});
