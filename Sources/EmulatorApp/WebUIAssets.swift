/// The web UI's page and style sheet (the script is `WebUIScript`). Plain HTML and CSS, served
/// from memory; everything the page shows is built by the script with text nodes, never HTML
/// from data, so object names and metadata cannot inject markup.
enum WebUIAssets {
  static let html = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>storage-emulator</title>
    <link rel="stylesheet" href="/ui/app.css">
    </head>
    <body>
    <header>
      <a href="#/" id="home">storage-emulator</a>
      <nav id="crumbs"></nav>
      <span id="live" class="off" title="live updates">live</span>
    </header>
    <div id="banner" hidden></div>
    <main id="main"><p>Loading…</p></main>
    <div id="toast" hidden></div>
    <script src="/ui/app.js"></script>
    </body>
    </html>
    """#

  static let css = #"""
    :root { --fg: #1d2330; --muted: #667085; --line: #e4e7ec; --accent: #1a73e8; --bg: #f8f9fb; --bad: #c5221f; }
    * { box-sizing: border-box; }
    body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
    header { display: flex; align-items: center; gap: 16px; padding: 10px 20px; background: #fff; border-bottom: 1px solid var(--line); position: sticky; top: 0; }
    header #home { font-weight: 600; color: var(--fg); text-decoration: none; }
    nav#crumbs { flex: 1; color: var(--muted); overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
    nav#crumbs a { color: var(--accent); text-decoration: none; }
    #live { font-size: 12px; padding: 2px 8px; border-radius: 10px; background: #e6f4ea; color: #137333; }
    #live.off { background: #fce8e6; color: var(--bad); }
    main { padding: 20px; max-width: 1200px; margin: 0 auto; }
    h1 { font-size: 20px; margin: 0 0 12px; word-break: break-all; }
    h2 { font-size: 15px; margin: 20px 0 8px; }
    table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
    th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
    th { font-weight: 600; color: var(--muted); font-size: 12px; background: #fafbfc; }
    td.num { text-align: right; font-variant-numeric: tabular-nums; }
    td.key { color: var(--muted); width: 14em; }
    td.value { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; word-break: break-all; }
    a { color: var(--accent); }
    button, .button { font: inherit; padding: 5px 12px; border: 1px solid var(--line); background: #fff; border-radius: 6px; cursor: pointer; color: var(--fg); text-decoration: none; display: inline-block; }
    button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
    button.danger { color: var(--bad); }
    button.small { padding: 1px 8px; font-size: 12px; }
    button:disabled { opacity: .5; cursor: default; }
    input[type=text] { font: inherit; padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; width: 100%; }
    .toolbar { display: flex; gap: 8px; align-items: center; margin: 12px 0; flex-wrap: wrap; }
    .spacer { flex: 1; }
    .narrow { width: 20em; }
    #drop-zone { border: 2px dashed var(--line); border-radius: 8px; padding: 14px; text-align: center; color: var(--muted); background: #fff; margin: 12px 0; }
    #drop-zone.over { border-color: var(--accent); color: var(--accent); }
    .columns { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
    @media (max-width: 900px) { .columns { grid-template-columns: 1fr; } }
    .badge { display: inline-block; padding: 1px 8px; border-radius: 10px; background: #e8f0fe; color: var(--accent); font-size: 12px; margin-right: 6px; }
    .edit td { padding: 4px 8px; }
    .muted { color: var(--muted); }
    #banner { background: #fef7e0; border-bottom: 1px solid #f9e3a3; padding: 8px 20px; }
    #toast { position: fixed; bottom: 16px; right: 16px; background: var(--fg); color: #fff; padding: 8px 14px; border-radius: 6px; max-width: 60ch; }
    #toast.error { background: var(--bad); }
    .flash { animation: flash 1.2s ease-out; }
    @keyframes flash { from { background: #fff3c4; } to { background: transparent; } }
    """#
}
