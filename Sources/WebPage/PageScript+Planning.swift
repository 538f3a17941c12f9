extension PageScript {
    /// The quick-add preview and the today panel: both read by the server with the library's
    /// own rules (`POST /v1/parse`, `GET /v1/today`). Text only ever goes in through textContent.
    static let planning = #"""
// The last line the server read for the preview: its fields, or its refusal.
const P = { text: '', fields: null, error: null, timer: 0, asked: 0 };
const CHIPS = [['due', 'due '], ['scheduled', 'scheduled '], ['wait', 'wait '], ['priority', '!'], ['list', '+'], ['recur', '']];

function previewSoon() {
  clearTimeout(P.timer);
  P.timer = setTimeout(preview, 200);
}

// Asks the server how it reads the typed line; a later line's answer wins.
async function preview() {
  const text = $('#new').value.trim();
  const asked = ++P.asked;
  let r = null;
  if (text) { try { r = await api('POST', '/v1/parse', { text, at: Date.now() }); } catch (e) { r = null; } }
  if (asked !== P.asked) return;
  if (r && r.status === 401) { refused(); return; }
  P.text = text;
  P.fields = r && r.status === 200 ? r.data : null;
  P.error = r && r.status === 400 ? (r.data && r.data.error) || 'The server cannot read this line.' : null;
  drawPreview(text && !r);
}

// Chips under the field: the title and each field the line names.
function drawPreview(away) {
  const out = $('#preview');
  out.replaceChildren();
  out.className = 'preview' + (P.error ? ' error' : '');
  if (P.error) { out.textContent = P.error; return; }
  if (away) { out.textContent = 'The server reads the line when it is sent.'; return; }
  const f = P.fields;
  if (!f) return;
  const chip = (field, text) => out.appendChild(el('span', { class: 'chip', 'data-field': field, text }));
  chip('title', f.title);
  for (const [k, prefix] of CHIPS) if (f[k] !== null && f[k] !== undefined) chip(k, prefix + spoken(k, f[k]));
  for (const tag of f.tags || []) chip('tag', '#' + tag);
}

// A field as people say it: "every 1 weeks" (the task form's rule) as "every week".
function spoken(key, value) {
  return key === 'recur' ? String(value).replace(/^every 1 (\w+)s$/, 'every $1') : String(value);
}

const TODAY = [['overdue', 'Overdue'], ['due_today', 'Due today'], ['scheduled', 'Scheduled'], ['in_progress', 'In progress'], ['next', 'Next']];

// Lists the today view again (after each listing, so it is as live as the list).
async function refreshToday() {
  let r;
  try { r = await api('GET', '/v1/today'); } catch (e) { return; }
  if (r.status === 200 && r.data) drawToday(r.data);
}

function drawToday(view) {
  const parts = [];
  let due = 0;
  for (const [key, label] of TODAY) {
    const tasks = view[key] || [];
    if (!tasks.length) continue;
    if (key !== 'next') due += tasks.length;
    const items = tasks.map((t) => el('li', { 'data-id': t.id }, el('span', { class: 'today-title', text: t.title || '' }),
      t.due ? el('span', { class: 'today-due', text: 'due ' + t.due }) : null));
    parts.push(el('section', { 'data-section': key }, el('h3', { text: label + ' (' + tasks.length + ')' }), el('ul', {}, ...items)));
  }
  if (!parts.length) parts.push(el('p', { class: 'empty', text: 'Nothing to do today.' }));
  $('#today-sections').replaceChildren(...parts);
  $('#today-count').textContent = due ? '(' + due + ')' : '';
}

"""#
}
