/// The page's style sheet: one column from 360 px up, dark when the system is.
enum PageStyle {
    static let sheet = #"""
:root { --bg: #fff; --fg: #1b1d21; --muted: #5d6470; --line: #d9dde3; --accent: #2f6fdf;
  --soft: #eef3fc; --warn: #9a4a00; --warnbg: #fff4e0; --danger: #b3261e; --field: #fff; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #15171a; --fg: #e6e8eb; --muted: #9aa2ad; --line: #30343a; --accent: #7aa7ff;
    --soft: #1f2a3d; --warn: #ffcf8a; --warnbg: #3a2a10; --danger: #ff8a80; --field: #1d2024; }
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
button, input, select, textarea { font: inherit; color: inherit; }
input, select, textarea { background: var(--field); border: 1px solid var(--line); border-radius: 6px;
  padding: .4rem .5rem; min-width: 0; }
button { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: .4rem .7rem;
  cursor: pointer; }
button:hover { border-color: var(--accent); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.bar { display: flex; align-items: center; gap: .5rem; padding: .6rem 1rem; border-bottom: 1px solid var(--line); }
.bar h1 { font-size: 1.15rem; margin: 0; flex: 1; }
.mode { color: var(--muted); font-size: .85rem; }
main { max-width: 52rem; margin: 0 auto; padding: .75rem 1rem 5rem; }
.banner { background: var(--warnbg); color: var(--warn); padding: .5rem 1rem; text-align: center; }
.signin form { display: grid; gap: .5rem; max-width: 22rem; }
.error { color: var(--danger); min-height: 1.4em; margin: 0; }
.add { display: flex; flex-wrap: wrap; gap: .5rem; }
.add input { flex: 1 1 12rem; font-size: 1.05rem; }
.preview { flex-basis: 100%; color: var(--muted); font-size: .85rem; min-height: 0; }
.preview.error { color: var(--danger); }
.chip { display: inline-block; border: 1px solid var(--line); border-radius: 1rem; padding: 0 .5rem; margin: .15rem .25rem 0 0; }
.chip[data-field="title"] { color: var(--fg); }
.today { margin: .75rem 0; border: 1px solid var(--line); border-radius: 6px; padding: .25rem .75rem; }
.today summary { cursor: pointer; font-weight: 600; padding: .25rem 0; }
.today h3 { font-size: .85rem; color: var(--muted); margin: .5rem 0 .15rem; }
.today ul { list-style: none; margin: 0; padding: 0; }
.today li { display: flex; gap: .75rem; padding: .1rem 0; }
.today-due, .today .empty { color: var(--muted); font-size: .85rem; }
.today section[data-section="overdue"] .today-due { color: var(--danger); }
.today .empty { padding: .25rem 0; text-align: left; }
.filters { display: flex; flex-wrap: wrap; gap: .5rem .75rem; align-items: end; margin: .75rem 0 .25rem; }
.filters label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); flex: 1 1 6.5rem; }
.filters label input, .filters label select { color: var(--fg); font-size: .95rem; width: 100%; }
.views { display: flex; gap: 0; flex: 1 1 100%; }
.views button { border-radius: 0; flex: 1; }
.views button:first-child { border-radius: 6px 0 0 6px; }
.views button:last-child { border-radius: 0 6px 6px 0; }
.views button[aria-pressed="true"] { background: var(--accent); color: var(--bg); border-color: var(--accent); }
.count { color: var(--muted); font-size: .85rem; margin: .5rem 0; }
.tasks { list-style: none; margin: 0; padding: 0; }
.task { display: flex; align-items: flex-start; gap: .6rem; padding: .55rem .4rem; border-bottom: 1px solid var(--line);
  content-visibility: auto; contain-intrinsic-size: auto 3.4rem; }
.task.selected { background: var(--soft); }
.task:focus { outline: 2px solid var(--accent); outline-offset: -2px; }
.task input[type="checkbox"] { width: 1.2rem; height: 1.2rem; margin-top: .15rem; flex: none; accent-color: var(--accent); }
.task .body { flex: 1; min-width: 0; }
.task .title { overflow-wrap: anywhere; white-space: pre-wrap; }
.task.done .title { text-decoration: line-through; color: var(--muted); }
.task .meta { color: var(--muted); font-size: .8rem; display: flex; flex-wrap: wrap; gap: .1rem .6rem; }
.task .meta .overdue { color: var(--danger); }
.task .actions { display: flex; gap: .3rem; flex: none; }
.task .actions button { padding: .2rem .5rem; font-size: .85rem; }
.depth-1 { padding-left: 1.8rem; } .depth-2 { padding-left: 3.2rem; }
.depth-3 { padding-left: 4.6rem; } .depth-4 { padding-left: 6rem; }
.editor { display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); gap: .5rem; width: 100%; }
.editor label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); }
.editor label input, .editor label textarea, .editor label select { color: var(--fg); font-size: .95rem; width: 100%; }
.editor .wide { grid-column: 1 / -1; }
.editor .buttons { display: flex; gap: .5rem; grid-column: 1 / -1; }
.empty { color: var(--muted); text-align: center; padding: 2rem 0; }
.toast { position: fixed; left: 50%; bottom: 1rem; transform: translateX(-50%); display: flex; gap: .75rem;
  align-items: center; background: var(--fg); color: var(--bg); padding: .6rem .9rem; border-radius: 8px;
  max-width: calc(100vw - 2rem); box-shadow: 0 4px 16px rgba(0,0,0,.25); }
.toast span { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.toast button { background: transparent; color: inherit; border-color: currentColor; }
dialog { border: 1px solid var(--line); border-radius: 10px; background: var(--bg); color: var(--fg); max-width: 22rem; }
dialog::backdrop { background: rgba(0,0,0,.4); }
dialog dl { display: grid; grid-template-columns: auto 1fr; gap: .3rem .8rem; }
dialog dt { font-family: ui-monospace, monospace; font-weight: 600; }
dialog dd { margin: 0; }
@media (max-width: 480px) {
  .bar { padding: .5rem .75rem; }
  main { padding: .5rem .75rem 5rem; }
  .task .actions button { padding: .2rem .4rem; }
}

"""#
}
