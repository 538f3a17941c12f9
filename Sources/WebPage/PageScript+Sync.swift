extension PageScript {
    /// State, the REST calls, the queue of writes kept while the server is away, and the
    /// changes feed that keeps the list live.
    static let sync = #"""
'use strict';
const KEY = { token: 'tasklog.token', queue: 'tasklog.queue', cache: 'tasklog.cache', view: 'tasklog.view', today: 'tasklog.today' };
// The orders the server offers (GET /v1/tasks?sort=NAME): its own, and urgency, which
// `tasklog serve` registers.
const SORTS = [['urgency', 'Urgency'], ['created', 'Added'], ['due', 'Due'], ['priority', 'Priority'], ['title', 'Title']];
const S = {
  token: localStorage.getItem(KEY.token), // null: not signed in; '': guest
  view: Object.assign({ status: 'open', q: '', tag: '', list: '', sort: 'urgency' }, load(KEY.view, {})),
  server: null, // the current view as the server last listed it
  rows: [], // what is shown: {task, depth}, in order
  queue: load(KEY.queue, []), // writes not yet answered, oldest first
  online: true, cursor: null, selected: null, editing: null,
  refreshing: false, dirty: false, flushing: false, feeding: false, listed: false,
};
const $ = (sel) => document.querySelector(sel);
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
function load(key, fallback) {
  try { const v = JSON.parse(localStorage.getItem(key)); return v === null ? fallback : v; } catch (e) { return fallback; }
}
// Stores a value; a refusal (storage full) is told unless `quiet` (a cache may be missing).
function save(key, value, quiet) {
  try { localStorage.setItem(key, JSON.stringify(value)); } catch (e) {
    if (quiet) localStorage.removeItem(key); else notice('This browser refused to store the page\u2019s data.');
  }
}

// One REST call. Throws when the server cannot be reached; answers {status, data, headers}.
async function api(method, path, body) {
  const headers = {};
  if (S.token) headers.Authorization = 'Bearer ' + S.token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, { method, headers, cache: 'no-store', credentials: 'omit',
    body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  return { status: r.status, data, headers: r.headers };
}

function viewQuery() {
  const v = S.view;
  const q = new URLSearchParams({ status: v.status, sort: v.sort });
  if (v.q.trim()) q.set('q', v.q.trim());
  if (v.tag.trim()) q.set('tag', v.tag.trim());
  if (v.list.trim()) q.set('list', v.list.trim());
  return q.toString();
}

// Lists the current view again; calls made meanwhile are folded into one more.
async function refresh() {
  if (S.refreshing) { S.dirty = true; return; }
  S.refreshing = true;
  try {
    do {
      S.dirty = false;
      const query = viewQuery();
      const r = await api('GET', '/v1/tasks?' + query);
      if (r.status === 401) { refused(); return; }
      if (r.status !== 200) { notice((r.data && r.data.error) || 'The server answered ' + r.status + '.'); return; }
      if (S.cursor === null) S.cursor = r.headers.get('TaskLog-Version');
      setOnline(true);
      if (query === viewQuery()) {
        S.server = r.data;
        render();
        refreshToday();
        if (!S.listed) {
          S.listed = true;
          performance.mark('tasklog:first-render'); // the rows are built; the next mark, drawn
          requestAnimationFrame(() => setTimeout(() => performance.mark('tasklog:first-paint'), 0));
        }
        save(KEY.cache, { query, tasks: r.data }, true);
      } else S.dirty = true;
    } while (S.dirty);
  } catch (e) {
    setOnline(false);
  } finally { S.refreshing = false; }
}

// Queues a write (kept in localStorage until the server answers it), shows it at once and sends it.
// `shown` is what the row shows until the server answers (the body when absent).
function enqueue(method, id, body, kind, shown) {
  S.queue = load(KEY.queue, []); // another tab may have sent or added some
  S.queue.push({ method, path: '/v1/tasks/' + encodeURIComponent(id), body, kind, id, shown });
  save(KEY.queue, S.queue);
  render();
  flush();
}

// Sends the queued writes in order, each until the server answers it. Every write is a PUT,
// PATCH or DELETE of a task the page named, so one sent twice changes nothing more. Tabs of
// the page take turns (a Web Lock), each reading the queue afresh.
async function flush() {
  if (S.flushing) return;
  S.flushing = true;
  let sent = false;
  try {
    sent = await (navigator.locks ? navigator.locks.request('tasklog.queue', sendQueued) : sendQueued());
  } finally {
    S.flushing = false;
    banner();
  }
  if (sent) refresh();
}

// Sends the writes waiting in storage, oldest first; answers whether any went.
async function sendQueued() {
  let sent = false;
  for (S.queue = load(KEY.queue, []); S.queue.length; S.queue = load(KEY.queue, [])) {
    const op = S.queue[0];
    let r;
    try { r = await api(op.method, op.path, op.body); } catch (e) { setOnline(false); return sent; }
    if (r.status === 401) { refused(); return sent; }
    if (r.status >= 500) { setOnline(false); return sent; }
    if (r.status === 400 && op.body && op.body.quick !== undefined) { keepAsTitle(op, r); continue; }
    if (r.status >= 400 && !(r.status === 404 && op.method === 'DELETE')) {
      notice('Not saved: ' + ((r.data && r.data.error) || 'the server answered ' + r.status));
    }
    save(KEY.queue, load(KEY.queue, []).slice(1));
    sent = true;
    setOnline(true);
  }
  return sent;
}

// A quick add the server could not read is sent again with its whole text as the title.
function keepAsTitle(op, r) {
  const queue = load(KEY.queue, []);
  queue[0] = Object.assign({}, op, { body: { title: op.body.quick }, shown: undefined });
  save(KEY.queue, queue);
  notice('Added as typed: ' + ((r.data && r.data.error) || 'the server could not read the line'));
}

// Follows the changes feed: each answer with changes lists the view again. While the server
// is away it retries every second, then sends what waits.
async function feed() {
  if (S.feeding) return;
  S.feeding = true;
  while (S.token !== null) {
    if (S.cursor === null) {
      await sleep(1000);
      if (!S.refreshing) await refresh();
      continue;
    }
    try {
      // While away, ask without waiting: the first answer says the server is back.
      const timeout = S.online ? 25000 : 0;
      const r = await api('GET', '/v1/changes?timeout=' + timeout + '&since=' + encodeURIComponent(S.cursor));
      if (r.status === 401) { refused(); break; }
      if (r.status !== 200) { S.cursor = null; await sleep(1000); continue; }
      const back = !S.online;
      S.cursor = r.data.cursor;
      setOnline(true);
      if (S.queue.length) flush();
      if (r.data.changes.length || back) refresh();
    } catch (e) {
      setOnline(false);
      await sleep(1000);
    }
  }
  S.feeding = false;
}

// Notes whether the server answers; when it answers again, what waits is sent.
function setOnline(online) {
  if (S.online === online) return;
  S.online = online;
  banner();
  if (online && S.queue.length) flush();
}

function banner() {
  const waiting = S.queue.length;
  const changes = waiting === 1 ? '1 change waits' : waiting + ' changes wait';
  const el = $('#banner');
  el.hidden = S.online && waiting === 0;
  const away = waiting ? 'The server cannot be reached. ' + changes + ' to be sent.' : 'The server cannot be reached; these are the last tasks seen.';
  el.textContent = S.online ? changes + ' to be sent.' : away;
  $('#mode').textContent = S.token === '' ? 'guest' : '';
}

"""#
}
