/// The page's HTML and its icon. Every dynamic text is set by the script with
/// `textContent`; this markup holds no task data.
enum PageHTML {
    static let document = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>TaskLog</title>
<link rel="icon" href="/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<header class="bar">
  <h1>TaskLog</h1>
  <span id="mode" class="mode"></span>
  <button id="help" type="button" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)">?</button>
  <button id="signout" type="button" hidden>Sign out</button>
</header>
<div id="banner" class="banner" role="status" aria-live="polite" hidden></div>
<main>
<section id="signin" class="signin" aria-labelledby="signin-title" hidden>
  <h2 id="signin-title">Sign in</h2>
  <form id="signin-form">
    <label for="token">Server token</label>
    <input id="token" type="password" autocomplete="current-password" required>
    <button type="submit">Sign in</button>
    <p id="signin-error" class="error" role="alert"></p>
  </form>
</section>
<section id="app" aria-label="Tasks" hidden>
  <form id="add" class="add" autocomplete="off">
    <label for="new" class="sr-only">New task</label>
    <input id="new" placeholder="Add a task" enterkeyhint="done">
    <button type="submit">Add</button>
    <output id="preview" for="new" class="preview" aria-live="polite"></output>
  </form>
  <details id="today" class="today" open>
    <summary>Today <span id="today-count"></span></summary>
    <div id="today-sections"></div>
  </details>
  <div class="filters" role="search">
    <div id="views" class="views" role="group" aria-label="Which tasks">
      <button type="button" data-status="open" aria-pressed="true">Open</button>
      <button type="button" data-status="done" aria-pressed="false">Done</button>
      <button type="button" data-status="deleted" aria-pressed="false">Deleted</button>
    </div>
    <label>Search <input id="q" type="search" placeholder="words"></label>
    <label>Tag <input id="tag" placeholder="tag"></label>
    <label>List <input id="list" placeholder="list"></label>
    <label>Sort <select id="sort"></select></label>
  </div>
  <p id="count" class="count" aria-live="polite"></p>
  <ul id="tasks" class="tasks" aria-label="Task list"></ul>
  <p id="empty" class="empty" hidden>No tasks here.</p>
</section>
</main>
<div id="toast" class="toast" role="status" hidden>
  <span id="toast-text"></span>
  <button id="undo" type="button">Undo</button>
</div>
<dialog id="keys" aria-labelledby="keys-title">
  <h2 id="keys-title">Keyboard</h2>
  <dl>
    <dt>n</dt><dd>add a task</dd>
    <dt>/</dt><dd>search</dd>
    <dt>Enter</dt><dd>add what is typed; save an edit</dd>
    <dt>j / k</dt><dd>next / previous task</dd>
    <dt>x</dt><dd>complete (or reopen) the task</dd>
    <dt>e</dt><dd>edit the task</dd>
    <dt>Delete</dt><dd>delete the task</dd>
    <dt>Esc</dt><dd>leave a field or an edit</dd>
    <dt>?</dt><dd>this list</dd>
  </dl>
  <form method="dialog"><button type="submit">Close</button></form>
</dialog>
</body>
</html>

"""#

    static let icon = #"""
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#2f6fdf"/><path d="M8 17l5 5 11-12" fill="none" stroke="#fff" stroke-width="4" stroke-linecap="round" stroke-linejoin="round"/></svg>

"""#
}
