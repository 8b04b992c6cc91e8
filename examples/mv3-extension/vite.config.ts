/**
 * Builds the extension into dist/ (load it unpacked): the service worker (worker.js, an ES module, as the manifest
 * declares) and the popup, with public/manifest.json copied as is. `MCP_SERVER_URL` sets the server at build time.
 */
import {fileURLToPath} from 'node:url'
import {defineConfig} from 'vite'

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url))

export default defineConfig({
  root: here('.'),
  // In your own extension these resolve to the installed package; here, to the sources of this repository.
  resolve: {
    alias: [
      {find: /^mcp-resumable-http$/, replacement: here('../../src/index.ts')},
      {find: /^mcp-resumable-http\/idb$/, replacement: here('../../src/idb.ts')},
    ],
  },
  define: {MCP_SERVER_URL: JSON.stringify(process.env['MCP_SERVER_URL'] ?? 'http://127.0.0.1:3000/mcp')},
  logLevel: 'warn',
  build: {
    outDir: here('dist'),
    emptyOutDir: true,
    target: 'chrome120',
    // No inline scripts or preload polyfill: the extension CSP allows only the extension's own files.
    modulePreload: false,
    minify: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 2000,
    rolldownOptions: {
      input: {worker: here('src/worker.ts'), popup: here('popup.html')},
      // The manifest names the worker file: no hash in its name.
      output: {entryFileNames: '[name].js', chunkFileNames: 'chunks/[name]-[hash].js'},
    },
  },
})
