/**
 * @module The dashboard's HTML shell (served at /dashboard/): header with the window picker, the three
 * tabs, and the bundled script (no CDN: the page works offline). Styles are inline and small.
 */

export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc · spend analytics</title>
<link rel="icon" href="data:,">
<style>
  :root { --fg: #1d2330; --muted: #5f6b7a; --line: #e3e7ee; --bg: #f6f8fb; --accent: #2f6fed; --bad: #c0392b; --warn: #a66300; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, -apple-system, Segoe UI, Roboto, sans-serif; color: var(--fg); background: var(--bg); }
  header { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; justify-content: space-between; padding: 14px 24px; background: #fff; border-bottom: 1px solid var(--line); }
  header h1 { font-size: 17px; margin: 0; }
  .windows button, nav button { border: 1px solid var(--line); background: #fff; padding: 6px 12px; border-radius: 6px; cursor: pointer; font: inherit; }
  .windows button[aria-pressed="true"], nav button[aria-selected="true"] { background: var(--accent); border-color: var(--accent); color: #fff; }
  .windows { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
  #custom { display: none; gap: 6px; align-items: center; }
  #custom.open { display: flex; }
  #range { color: var(--muted); font-size: 12px; width: 100%; text-align: right; }
  nav { display: flex; gap: 6px; padding: 12px 24px 0; }
  main { padding: 12px 24px 40px; max-width: 1200px; }
  section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin: 14px 0; }
  h2 { font-size: 15px; margin: 0 0 10px; }
  h3 { font-size: 12px; margin: 0 0 4px; color: var(--muted); font-weight: 600; text-transform: uppercase; letter-spacing: .03em; }
  .identity h3, h3 .id { text-transform: none; letter-spacing: 0; overflow-wrap: anywhere; } /* ids are case-sensitive */
  .tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 12px; margin: 14px 0; }
  .tile { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
  .figure { font-size: 22px; font-weight: 650; margin: 2px 0; display: block; }
  .sub { color: var(--muted); margin: 2px 0 0; font-size: 12px; }
  .negative .figure, .figure.negative { color: var(--bad); }
  td .figure { font-size: inherit; font-weight: inherit; margin: 0; display: inline; } /* a table's money reads at its row's size */
  .warning { color: var(--warn); font-size: 12px; margin: 6px 0 0; }
  .callout { background: #fff7e6; border: 1px solid #f0c36d; border-radius: 8px; padding: 10px 14px; margin: 14px 0; }
  table { border-collapse: collapse; width: 100%; margin: 6px 0; }
  th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; } /* ids, paths and times break rather than push the table out of its card */
  section { overflow-x: auto; }
  th { color: var(--muted); font-weight: 600; font-size: 12px; }
  .chart { position: relative; height: 260px; }
  .empty, .empty-state p { color: var(--muted); }
  .empty-state { background: #fff; border: 1px dashed var(--line); border-radius: 8px; padding: 20px; margin: 14px 0; }
  pre { background: #f0f3f8; padding: 10px; border-radius: 6px; overflow-x: auto; }
  button.link { background: none; border: 0; color: var(--accent); cursor: pointer; padding: 0; font: inherit; text-decoration: underline; }
  .badge { font-size: 11px; padding: 2px 6px; border-radius: 10px; background: #e8edf5; margin-left: 6px; }
  .badge.live { background: #e3f6e8; color: #1e7b3a; }
  .message { border-left: 3px solid var(--line); padding: 4px 8px; margin: 4px 0; white-space: pre-wrap; }
  .message.user { border-color: var(--accent); }
  .error { color: var(--bad); }
  ul.turns { list-style: none; padding: 0; }
  form.inline { display: flex; gap: 8px; align-items: center; }
</style>
</head>
<body>
<header>
  <h1>svc · spend analytics</h1>
  <div class="windows" role="group" aria-label="Window">
    <button data-preset="today">Today</button>
    <button data-preset="7d" aria-pressed="true">7 days</button>
    <button data-preset="30d">30 days</button>
    <button data-preset="custom">Custom</button>
    <form id="custom"><input type="datetime-local" name="from" required> – <input type="datetime-local" name="to" required><button>Apply</button></form>
  </div>
  <div id="range"></div>
</header>
<nav role="tablist">
  <button role="tab" data-tab="cost" aria-selected="true">Cost</button>
  <button role="tab" data-tab="activity">Activity</button>
  <button role="tab" data-tab="identity">Spend by identity</button>
</nav>
<main id="content"><p class="empty">Loading…</p></main>
<script src="app.js"></script>
</body>
</html>
`;
