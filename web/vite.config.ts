import { defineConfig } from 'vite';

// The client is built into web/dist and served by the server itself (src/web/client.ts).
export default defineConfig({
  root: import.meta.dirname,
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No inline script in the page: the Content-Security-Policy allows the client's own files only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
});
