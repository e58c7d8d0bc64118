import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', 'contract/index': 'src/contract/index.ts' },
  format: ['esm', 'cjs'],
  target: 'node22',
  dts: true,
  clean: true,
  sourcemap: true,
});
