/// The page's service worker: keeps the page's files so that a reload without the server
/// still shows the page (and, from the page's own storage, the last tasks it saw). Files
/// come from the network when it answers, from the cache otherwise; task data is never cached
/// here.
enum PageWorker {
    static func script(version: String) -> String {
        #"""
'use strict';
const CACHE = 'tasklog-\#(version)';
const FILES = ['/', '/app.css', '/app.js', '/icon.svg'];
self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(FILES)).then(() => self.skipWaiting()));
});
self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});
self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== 'GET' || url.origin !== self.location.origin || !FILES.includes(url.pathname)) return;
  event.respondWith(fetch(event.request).then((answer) => {
    if (answer.ok) {
      const copy = answer.clone();
      caches.open(CACHE).then((c) => c.put(url.pathname, copy));
    }
    return answer;
  }).catch(() => caches.open(CACHE).then((c) => c.match(url.pathname)).then((kept) => kept || Response.error())));
});

"""#
    }
}
