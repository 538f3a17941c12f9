extension PageScript {
    /// What people do: sign in, add, complete, delete with undo, restore, filter, move with
    /// the keyboard; and the start of the page.
    static let actions = #"""
function newId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

// Adds the line as a quick add: the server reads it with the CLI's grammar at the instant
// typed, so an add queued offline lands as it would have then. A line the preview refused
// stays in the field; answers whether it was added.
function add(text) {
  const line = text.trim();
  if (!line || (P.text === line && P.error)) return false;
  const id = newId();
  S.selected = id;
  const shown = P.text === line && P.fields ? P.fields : { title: line };
  enqueue('PUT', id, { quick: line, at: Date.now() }, 'add', shown);
  return true;
}

function find(id) { const r = S.rows.find((x) => x.task.id === id); return r && r.task; }

function toggle(id) {
  const t = find(id);
  if (t && S.view.status !== 'deleted') enqueue('PATCH', id, { done: !t.done }, 'edit');
}

let toastTimer = 0;
function remove(id) {
  const t = find(id);
  if (!t) return;
  const next = S.rows[S.rows.findIndex((r) => r.task.id === id) + 1];
  enqueue('DELETE', id, undefined, 'delete');
  if (next) select(next.task.id);
  toast('Deleted \u201c' + (t.title || '') + '\u201d', () => enqueue('PUT', id, {}, 'restore'));
}

function restore(id) {
  const t = find(id);
  enqueue('PUT', id, {}, 'restore');
  if (t) toast('Restored \u201c' + (t.title || '') + '\u201d', null);
}

function toast(text, undo) {
  const box = $('#toast');
  $('#toast-text').textContent = text;
  $('#undo').hidden = !undo;
  $('#undo').onclick = () => { box.hidden = true; if (undo) undo(); };
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, 6000);
}

function notice(text) { toast(text, null); }

function select(id) {
  S.selected = id;
  for (const li of document.querySelectorAll('.task.selected')) li.classList.remove('selected');
  const entry = id && rowCache.get(id);
  if (entry) { entry.el.classList.add('selected'); entry.el.focus({ preventScroll: false }); }
}

function move(step) {
  if (!S.rows.length) return;
  const i = S.rows.findIndex((r) => r.task.id === S.selected);
  const j = i < 0 ? (step > 0 ? 0 : S.rows.length - 1) : Math.max(0, Math.min(S.rows.length - 1, i + step));
  select(S.rows[j].task.id);
}

function onKey(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.target.closest('input, textarea, select')) { if (e.key === 'Escape') e.target.blur(); return; }
  if ($('#keys').open || $('#app').hidden) return;
  const act = { n: () => $('#new').focus(), '/': () => $('#q').focus(), j: () => move(1), k: () => move(-1),
    x: () => S.selected && toggle(S.selected), e: () => S.selected && edit(S.selected),
    Delete: () => S.selected && remove(S.selected), '?': () => $('#keys').showModal() }[e.key];
  if (act) { e.preventDefault(); act(); }
}

function onListClick(e) {
  const li = e.target.closest('.task');
  if (!li) return;
  const id = li.dataset.id;
  if (e.target.classList.contains('tick')) { e.preventDefault(); toggle(id); } else if (e.target.classList.contains('edit')) edit(id);
  else if (e.target.classList.contains('delete')) remove(id);
  else if (e.target.classList.contains('restore')) restore(id);
  else if (!e.target.closest('form')) select(id);
}

let filterTimer = 0;
function setView(change) {
  Object.assign(S.view, change);
  save(KEY.view, S.view);
  for (const b of document.querySelectorAll('#views button')) b.setAttribute('aria-pressed', String(b.dataset.status === S.view.status));
  clearTimeout(filterTimer);
  filterTimer = setTimeout(refresh, 150);
}

function refused() {
  const had = S.token;
  S.token = null;
  localStorage.removeItem(KEY.token);
  showSignIn(had ? 'The server refused the token. Check it and sign in again.' : 'This server needs its token.');
}

function showSignIn(message) {
  $('#app').hidden = true;
  $('#signout').hidden = true;
  $('#signin').hidden = false;
  $('#signin-error').textContent = message;
  $('#token').focus();
}

async function signIn(token) {
  S.token = token;
  let r;
  try { r = await api('GET', '/v1/tasks?status=open&sort=created'); } catch (e) {
    S.token = null;
    showSignIn('The server cannot be reached. Is tasklog serve running?');
    return;
  }
  if (r.status === 401) { S.token = null; showSignIn('The server refused this token. Check it and try again.'); return; }
  localStorage.setItem(KEY.token, token);
  enter();
}

function enter() {
  $('#signin').hidden = true;
  $('#app').hidden = false;
  $('#signout').hidden = S.token === '';
  const cached = load(KEY.cache, null);
  if (cached && cached.query === viewQuery()) { S.server = cached.tasks; render(); }
  flush();
  refresh().then(feed);
}

function bind() {
  const sort = $('#sort');
  for (const [v, label] of SORTS) sort.appendChild(el('option', { value: v, text: label }));
  const v = S.view;
  sort.value = v.sort; $('#q').value = v.q; $('#tag').value = v.tag; $('#list').value = v.list;
  for (const b of document.querySelectorAll('#views button')) {
    b.setAttribute('aria-pressed', String(b.dataset.status === v.status));
    b.addEventListener('click', () => setView({ status: b.dataset.status }));
  }
  for (const name of ['q', 'tag', 'list']) $('#' + name).addEventListener('input', (e) => setView({ [name]: e.target.value }));
  sort.addEventListener('change', () => setView({ sort: sort.value }));
  $('#add').addEventListener('submit', (e) => {
    e.preventDefault();
    if (add($('#new').value)) { $('#new').value = ''; preview(); }
  });
  $('#new').addEventListener('input', previewSoon);
  const today = $('#today');
  today.open = load(KEY.today, true);
  today.addEventListener('toggle', () => save(KEY.today, today.open, true));
  $('#signin-form').addEventListener('submit', (e) => { e.preventDefault(); signIn($('#token').value); });
  // Signing out forgets the token and the tasks seen; writes still queued are sent after the next sign-in.
  $('#signout').addEventListener('click', () => {
    for (const key of [KEY.token, KEY.cache]) localStorage.removeItem(key);
    S.token = null;
    location.reload();
  });
  $('#help').addEventListener('click', () => $('#keys').showModal());
  $('#tasks').addEventListener('click', onListClick);
  document.addEventListener('keydown', onKey);
  window.addEventListener('storage', (e) => { if (e.key === KEY.queue) { S.queue = load(KEY.queue, []); render(); } });
}

async function start() {
  bind();
  if ('serviceWorker' in navigator) navigator.serviceWorker.register('/sw.js').catch(() => {});
  if (S.token !== null) { enter(); return; }
  try {
    const r = await api('GET', '/v1/tasks?status=open&sort=created');
    if (r.status === 200) { S.token = ''; localStorage.setItem(KEY.token, ''); enter(); return; }
    showSignIn('');
  } catch (e) {
    showSignIn('The server cannot be reached. Is tasklog serve running?');
  }
}

start();

"""#
}
