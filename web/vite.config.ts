import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'
import tailwindcss from '@tailwindcss/vite'

// The page is served by the api binary (web/dist is embedded); `npm run dev` proxies /api to a
// running dev stack for hot reloading.
export default defineConfig({
  plugins: [react(), tailwindcss()],
  build: {
    outDir: 'dist',
    emptyOutDir: false, // keeps dist/.gitkeep so a Go build without Node still compiles
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 2000, // mermaid is one lazy chunk
  },
  server: {
    proxy: { '/api': { target: process.env.SAPAGENT_URL ?? 'http://localhost:8080', ws: true } },
  },
})
