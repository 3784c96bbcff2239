/*
 * The web chat's service worker: an offline shell, never data.
 *
 * Cached: the app itself (index.html, its hashed /assets/ files, the manifest and icons), so the web chat opens
 * without a network and says it is offline. Never cached, never even intercepted: the API (/api/…, including
 * the SSE event streams), MCP, health checks and the dev issuer; anything that is not a same-origin GET; any
 * request that asks for text/event-stream. Conversations, approvals and keys only ever come from the server.
 */
const CACHE = "pa-shell-v1";
const STATIC = ["/manifest.webmanifest", "/favicon.svg", "/icon-192.png", "/icon-512.png"];
const NEVER = ["/api", "/mcp", "/healthz", "/readyz", "/health", "/.well-known", "/dev-issuer", "/openapi.json", "/docs", "/redoc"];

const never = (path) => NEVER.some((prefix) => path === prefix || path.startsWith(prefix + "/"));

async function precache() {
  const cache = await caches.open(CACHE);
  const index = await fetch("/", { cache: "no-cache" });
  if (!index.ok) return;
  const html = await index.clone().text();
  await cache.put("/", index);
  const assets = new Set([...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]));
  // Every lazily loaded page too, from Vite's build manifest, so any page opens offline (best effort).
  try {
    const manifest = await (await fetch("/.vite/manifest.json", { cache: "no-cache" })).json();
    for (const chunk of Object.values(manifest)) {
      if (chunk.file) assets.add("/" + chunk.file);
      for (const css of chunk.css ?? []) assets.add("/" + css);
    }
  } catch {
    // no build manifest served: the pages visited online are cached as they load
  }
  await cache.addAll([...STATIC, ...assets]);
}

self.addEventListener("install", (event) => {
  event.waitUntil(precache().then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith("pa-shell-") && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

async function shell(request) {
  // Network first (a new deploy shows at once); offline, the cached index.html (the client routes).
  try {
    const response = await fetch(request);
    if (response.ok && (response.headers.get("content-type") ?? "").includes("text/html")) {
      const cache = await caches.open(CACHE);
      await cache.put("/", response.clone());
    }
    return response;
  } catch (err) {
    const cached = await caches.match("/");
    if (cached) return cached;
    throw err;
  }
}

async function cacheFirst(request) {
  const cached = await caches.match(request);
  if (cached) return cached;
  const response = await fetch(request);
  if (response.ok) {
    const cache = await caches.open(CACHE);
    await cache.put(request, response.clone());
  }
  return response;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || never(url.pathname)) return;
  if ((request.headers.get("accept") ?? "").includes("text/event-stream")) return;
  if (request.mode === "navigate") {
    event.respondWith(shell(request));
  } else if (url.pathname.startsWith("/assets/") || STATIC.includes(url.pathname)) {
    event.respondWith(cacheFirst(request));
  }
});

/*
 * Web Push: a message from our server (an approval is waiting) becomes a notification; a click opens the page it
 * names. Any other payload (not JSON, no title) still shows a plain notification: a push must always show one.
 */
const ICON = "/icon-192.png";
const GENERIC = { title: "Personal Agent", body: "Something may need your attention.", url: "/approvals" };

// Only a path on this site: a push message never sends the click anywhere else.
const localPath = (url) => (typeof url === "string" && url.startsWith("/") && !url.startsWith("//") ? url : GENERIC.url);

function readPush(data) {
  let message = null;
  try {
    message = data ? data.json() : null;
  } catch {
    message = null;
  }
  if (!message || typeof message !== "object" || typeof message.title !== "string" || !message.title.trim()) return GENERIC;
  return {
    title: message.title,
    body: typeof message.body === "string" ? message.body : "",
    url: localPath(message.url),
    tag: typeof message.tag === "string" && message.tag ? message.tag : undefined,
  };
}

self.addEventListener("push", (event) => {
  let shown;
  try {
    const message = readPush(event.data);
    const options = { body: message.body, icon: ICON, data: { url: message.url }, renotify: false };
    if (message.tag) options.tag = message.tag;
    shown = self.registration.showNotification(message.title, options);
  } catch {
    shown = self.registration.showNotification(GENERIC.title, { body: GENERIC.body, icon: ICON, data: { url: GENERIC.url } });
  }
  event.waitUntil(shown.catch(() => undefined));
});

async function openPage(path) {
  const url = new URL(path, self.location.origin).href;
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const open = windows.find((client) => new URL(client.url).origin === self.location.origin);
  if (open) {
    try {
      const focused = await open.focus();
      if (focused.url !== url) await focused.navigate(url);
      return;
    } catch {
      // not ours to steer (not controlled by this worker): open a new window instead
    }
  }
  await self.clients.openWindow(url);
}

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil(openPage(localPath(event.notification.data && event.notification.data.url)));
});
