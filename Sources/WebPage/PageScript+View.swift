extension PageScript {
    /// Drawing the list: the server's view with the queued writes laid over it, subtasks under
    /// their parents, and the inline editor. Task text only ever goes in through textContent.
    static let view = #"""
const rowCache = new Map(); // id -> {key, el}

// The server's view with the writes still queued applied, as the server will apply them.
function overlay(tasks) {
  const status = S.view.status;
  if (!S.queue.length) return tasks;
  const out = tasks.slice();
  const at = (id) => out.findIndex((t) => t.id === id);
  for (const op of S.queue) {
    const i = at(op.id);
    if (op.kind === 'add') {
      if (i < 0 && status === 'open') out.push(Object.assign({ id: op.id, done: false, tags: [], local: true }, op.shown || op.body));
    } else if (op.kind === 'edit' && i >= 0) {
      out[i] = Object.assign({}, out[i], op.body, { local: true });
      if ('done' in op.body && ((status === 'open' && op.body.done) || (status === 'done' && !op.body.done))) out.splice(i, 1);
    } else if ((op.kind === 'delete' && status !== 'deleted') || (op.kind === 'restore' && status === 'deleted')) {
      if (i >= 0) out.splice(i, 1);
    }
  }
  return out;
}

function parentOf(t) { return t.parent || (t.meta && t.meta.parent) || null; }

// Each task after its parent (when the parent is shown), indented by depth; the rest in order.
function nest(tasks) {
  const shown = new Set(tasks.map((t) => t.id));
  const children = new Map();
  const roots = [];
  for (const t of tasks) {
    const p = parentOf(t);
    if (p && p !== t.id && shown.has(p)) {
      if (!children.has(p)) children.set(p, []);
      children.get(p).push(t);
    } else roots.push(t);
  }
  const rows = [];
  const placed = new Set();
  const walk = (t, depth) => {
    if (placed.has(t.id)) return;
    placed.add(t.id);
    rows.push({ task: t, depth: Math.min(depth, 4) });
    for (const c of children.get(t.id) || []) walk(c, depth + 1);
  };
  for (const t of roots) walk(t, 0);
  for (const t of tasks) walk(t, 0); // a cycle of parents: shown unindented
  return rows;
}

// Draws the rows, reusing each unchanged task's element and moving only what moved.
function render() {
  S.rows = nest(overlay(S.server || []));
  const list = $('#tasks');
  const keep = new Set();
  let at = list.firstChild;
  for (const { task, depth } of S.rows) {
    keep.add(task.id);
    let entry = rowCache.get(task.id);
    if (S.editing !== task.id || !entry) {
      const key = (task.local ? JSON.stringify(task) : task.updatedAt) + depth + S.view.status;
      if (!entry || entry.key !== key) {
        const fresh = row(task, depth);
        if (entry && entry.el.parentNode === list) list.replaceChild(fresh, entry.el);
        if (entry && at === entry.el) at = fresh;
        entry = { key, el: fresh };
        rowCache.set(task.id, entry);
      }
    }
    entry.el.classList.toggle('selected', S.selected === task.id);
    if (entry.el === at) at = at.nextSibling; else list.insertBefore(entry.el, at);
  }
  while (at) { const next = at.nextSibling; at.remove(); at = next; }
  for (const id of rowCache.keys()) if (!keep.has(id)) rowCache.delete(id);
  const n = S.rows.length;
  $('#empty').hidden = n > 0;
  $('#count').textContent = n === 1 ? '1 task' : n + ' tasks';
  banner();
}

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === 'text') e.textContent = v;
    else if (k === 'class') e.className = v;
    else if (k in e) e[k] = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c) e.appendChild(c);
  return e;
}

// The row's elements, made once and cloned per task (much faster than building each).
const rowProto = { live: null, deleted: null };
function proto(deleted) {
  const li = el('li', { class: 'task', tabIndex: -1 },
    el('input', { type: 'checkbox', class: 'tick', disabled: deleted }),
    el('div', { class: 'body' }, el('div', { class: 'title' }), el('div', { class: 'meta' })),
    el('div', { class: 'actions' }, ...(deleted ? [el('button', { type: 'button', class: 'restore', text: 'Restore' })]
      : [el('button', { type: 'button', class: 'edit', text: 'Edit' }), el('button', { type: 'button', class: 'delete', text: 'Delete' })])));
  return li;
}

function row(t, depth) {
  const title = t.title || '';
  const deleted = S.view.status === 'deleted';
  const key = deleted ? 'deleted' : 'live';
  const li = (rowProto[key] || (rowProto[key] = proto(deleted))).cloneNode(true);
  if (t.done) li.classList.add('done');
  if (depth) li.classList.add('depth-' + depth);
  li.dataset.id = t.id;
  const [tick, body, actions] = li.children;
  tick.checked = !!t.done;
  tick.setAttribute('aria-label', (t.done ? 'Reopen: ' : 'Complete: ') + title);
  body.firstChild.textContent = title;
  meta(t, body.lastChild);
  for (const b of actions.children) b.setAttribute('aria-label', b.textContent + ': ' + title);
  return li;
}

// Fills a row's meta line `m`: due, priority, tags, list and the start of the notes.
function meta(t, m) {
  const span = (text, cls) => {
    const e = document.createElement('span');
    e.textContent = text;
    if (cls) e.className = cls;
    m.appendChild(e);
  };
  const today = new Date().toISOString().slice(0, 10);
  if (t.due) span('due ' + t.due, !t.done && t.due.slice(0, 10) < today ? 'overdue' : '');
  if (t.priority !== undefined && t.priority !== null) span('P' + t.priority);
  for (const tag of t.tags || []) span('#' + tag);
  if (t.list) span('@' + t.list);
  if (t.notes) span(t.notes.length > 80 ? t.notes.slice(0, 80) + '\u2026' : t.notes);
}

// Replaces a row with a form for every field; Enter or Save sends the fields that changed.
function edit(id) {
  const entry = rowCache.get(id);
  const t = S.rows.find((r) => r.task.id === id);
  if (!entry || !t || S.view.status === 'deleted') return;
  const task = t.task;
  S.editing = id;
  const field = (label, input, wide) => el('label', { class: wide ? 'wide' : '' }, document.createTextNode(label), input);
  const title = el('input', { name: 'title', value: task.title || '', required: true });
  const notes = el('textarea', { name: 'notes', rows: 2, value: task.notes || '' });
  const due = el('input', { name: 'due', value: task.due || '', placeholder: 'YYYY-MM-DD' });
  const priority = el('select', { name: 'priority' });
  for (const [v, label] of [['', 'none'], ['0', '0'], ['1', '1'], ['2', '2'], ['3', '3 (most urgent)']]) {
    priority.appendChild(el('option', { value: v, text: label, selected: String(task.priority ?? '') === v }));
  }
  const tags = el('input', { name: 'tags', value: (task.tags || []).join(', ') });
  const list = el('input', { name: 'list', value: task.list || '' });
  const form = el('form', { class: 'editor', 'aria-label': 'Edit task' },
    field('Title', title, true), field('Notes', notes, true), field('Due', due), field('Priority', priority),
    field('Tags (comma-separated)', tags), field('List', list),
    el('div', { class: 'buttons' }, el('button', { type: 'submit', text: 'Save' }),
      el('button', { type: 'button', class: 'cancel', text: 'Cancel' })));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const wanted = { title: title.value.trim(), notes: notes.value || null, due: due.value.trim() || null,
      priority: priority.value === '' ? null : Number(priority.value),
      tags: tags.value.split(',').map((s) => s.trim()).filter(Boolean), list: list.value.trim() || null };
    const changed = {};
    for (const [k, v] of Object.entries(wanted)) {
      if (JSON.stringify(v) !== JSON.stringify(task[k] ?? (k === 'tags' ? [] : null))) changed[k] = v;
    }
    if (!wanted.title) { title.focus(); return; }
    stopEditing(id);
    if (Object.keys(changed).length) enqueue('PATCH', id, changed, 'edit');
  });
  form.querySelector('.cancel').addEventListener('click', () => stopEditing(id));
  form.addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.stopPropagation(); stopEditing(id); } });
  entry.el.replaceChildren(form);
  entry.key = null;
  title.focus();
}

function stopEditing(id) {
  S.editing = null;
  const entry = rowCache.get(id);
  if (entry) entry.key = null;
  render();
  select(id);
}

"""#
}
