import { defineConfig } from "vitest/config";
import vue from "@vitejs/plugin-vue";

// The dev server proxies the API to a running `pa dev` (PA_API_URL, default http://127.0.0.1:8000).
const api = process.env.PA_API_URL ?? "http://127.0.0.1:8000";

export default defineConfig({
  plugins: [vue()],
  build: {
    target: "es2022",
    sourcemap: false,
    // The chunk graph, for bench/frontend_size.py (which JS the first page load needs).
    manifest: true,
    // Keep the first route small: views, markdown and OIDC are split into their own chunks.
    chunkSizeWarningLimit: 300,
  },
  server: {
    proxy: {
      "/api": { target: api, changeOrigin: false },
      "/healthz": api,
      "/readyz": api,
    },
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
