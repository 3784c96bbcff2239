/** The installable web app: the service worker (an offline shell; see public/sw.js) and whether we are online. */

import { reactive } from "vue";

export const connectivity = reactive({ online: typeof navigator === "undefined" ? true : navigator.onLine });

export function registerServiceWorker(): void {
  if (typeof window === "undefined") return;
  window.addEventListener("online", () => (connectivity.online = true));
  window.addEventListener("offline", () => (connectivity.online = false));
  // Only the built app: the Vite dev server's modules are not a shell worth caching.
  if (!import.meta.env.PROD || !("serviceWorker" in navigator)) return;
  window.addEventListener("load", () => {
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => undefined);
  });
}
