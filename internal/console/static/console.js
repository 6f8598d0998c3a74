// orchd console: fills the page shells from the management API and keeps
// them live. Plain script, no dependencies; see internal/console/doc.go.
'use strict';
(() => {
  const body = document.body;
  const PREFIX = body.dataset.prefix || '/console/';
  const API = body.dataset.api || '/api/v1/';
  const ENDPOINTS = body.dataset.endpointBase || '';
  const TOKEN_KEY = 'orchd.adminToken';
  const $ = (id) => document.getElementById(id);

  // ---- small helpers -------------------------------------------------

  // el builds an element: attrs are attributes (class, href, ...), with
  // "text" for its text and "data" for data-* attributes; kids are nodes
  // or strings (always inserted as text, never as HTML).
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'data') for (const [dk, dv] of Object.entries(v)) e.dataset[dk] = dv;
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k);
    return e;
  }
  const td = (text, cls) => el('td', { class: cls, text: text });
  const num = (n) => td(n === undefined ? '0' : String(n), 'num');

  function fill(tbody, rows, emptyId) {
    tbody.replaceChildren(...rows);
    if (emptyId && $(emptyId)) $(emptyId).hidden = rows.length > 0;
  }

  function isZeroTime(s) { return !s || s.startsWith('0001-01-01'); }
  function pad(n, w = 2) { return String(n).padStart(w, '0'); }
  function fmtTime(s) {
    if (isZeroTime(s)) return '—';
    const d = new Date(s);
    if (isNaN(d)) return s;
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }
  function fmtTimeMs(s) {
    const d = new Date(s);
    return isNaN(d) ? fmtTime(s) : `${fmtTime(s)}.${pad(d.getMilliseconds(), 3)}`;
  }
  function fmtDur(ns) {
    if (ns === null || ns === undefined || !isFinite(ns)) return '—';
    if (ns < 1e3) return `${Math.round(ns)} ns`;
    if (ns < 1e6) return `${(ns / 1e3).toFixed(1)} µs`;
    if (ns < 1e9) return `${(ns / 1e6).toFixed(ns < 1e7 ? 2 : 1)} ms`;
    return `${(ns / 1e9).toFixed(2)} s`;
  }
  // localName turns "{ns}local" into "local".
  function localName(n) { const i = (n || '').lastIndexOf('}'); return i >= 0 ? n.slice(i + 1) : n; }
  function stateBadge(state, id) {
    return el('span', { class: `state state-${state}`, id: id, data: { state: state }, text: state });
  }
  function processLink(name, version) {
    const q = new URLSearchParams({ name: name });
    if (version) q.set('version', version);
    return el('a', { href: `${PREFIX}process?${q}`, title: name, text: localName(name) });
  }
  function instanceLink(id) {
    return el('a', { href: `${PREFIX}instance?${new URLSearchParams({ id: id })}`, text: id });
  }
  function showError(id, err) {
    const box = $(id);
    if (!box) return;
    box.hidden = !err;
    box.textContent = err ? String(err.message || err) : '';
  }

  // ---- the API -------------------------------------------------------

  function token() { try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch (e) { return ''; } }

  // api calls the management API; it resolves to the decoded JSON and
  // rejects with an Error whose message is the API's "error".
  async function api(path, method) {
    const headers = { Accept: 'application/json' };
    method = method || 'GET';
    // With a token configured every API request needs it, reads too.
    if (token()) headers.Authorization = 'Bearer ' + token();
    const r = await fetch(API + path, { method: method, headers: headers, cache: 'no-store' });
    const text = await r.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
    if (!r.ok) {
      const msg = data && data.error ? data.error : (text.trim() || r.statusText);
      const err = new Error(`${r.status} ${msg}`);
      err.status = r.status;
      throw err;
    }
    return data;
  }
  const enc = encodeURIComponent;

  // ---- the diagram ---------------------------------------------------

  // showDiagram puts the SVG the API draws at path (a process version's
  // diagram, with its statistics or an instance's path) into #diagram;
  // the document is parsed as SVG, never as HTML, and left alone when
  // it did not change.
  let shownSVG = '';
  async function showDiagram(path, hint) {
    const headers = { Accept: 'image/svg+xml' };
    if (token()) headers.Authorization = 'Bearer ' + token();
    let text;
    try {
      const r = await fetch(API + path, { headers: headers, cache: 'no-store' });
      text = await r.text();
      if (!r.ok) {
        let msg = text.trim();
        try { msg = JSON.parse(text).error || msg; } catch (e) { /* not JSON */ }
        throw new Error(`${r.status} ${msg}`);
      }
    } catch (err) {
      $('diagram-hint').textContent = `No diagram: ${err.message}`;
      return;
    }
    $('diagram-hint').textContent = hint;
    if (text === shownSVG) return;
    const svg = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
    if (!svg || svg.localName !== 'svg') {
      $('diagram-hint').textContent = 'No diagram: the answer is not SVG.';
      return;
    }
    shownSVG = text;
    $('diagram').replaceChildren(document.importNode(svg, true));
  }

  // ---- token box and read-only state --------------------------------

  let apiReadOnly = false;
  let tokenAccess = 'none'; // what the API says the token may do
  function canAct() { return !apiReadOnly && token() !== '' && tokenAccess === 'admin'; }
  function readOnlyReason() {
    if (apiReadOnly) return 'The API is read-only: orchd runs without --admin-token-file, so the console can only look.';
    if (!token()) return 'Read-only: enter the admin token (the one in orchd serve --admin-token-file) in the box at the top to use these buttons.';
    if (tokenAccess === 'read') return 'Read-only: the token given only reads; enter the admin token (orchd serve --admin-token-file) to use these buttons.';
    if (tokenAccess !== 'admin') return 'Checking the token…';
    return '';
  }
  // checkToken asks the API what the token may do.
  function checkToken() {
    return api('').then((root) => {
      apiReadOnly = !!(root && root.readOnly);
      tokenAccess = (root && root.access) || (token() ? 'admin' : 'none');
      updateButtons();
    }).catch(() => { tokenAccess = 'none'; updateButtons(); });
  }
  // updateButtons enables the action buttons when an action can be sent
  // and says why not otherwise.
  function updateButtons() {
    const reason = readOnlyReason();
    for (const b of document.querySelectorAll('button[data-action], button[data-version-action]')) {
      b.disabled = reason !== '';
      if (reason) b.title = reason; else b.removeAttribute('title');
    }
    for (const p of document.querySelectorAll('.readonly-note')) {
      p.textContent = reason;
      p.hidden = reason === '';
    }
    const st = $('token-state');
    if (st) st.textContent = apiReadOnly ? 'API read-only' : (token() ? (tokenAccess === 'read' ? 'read token set' : 'token set') : 'read-only');
  }
  function setupToken() {
    const form = $('token-form');
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const v = $('token').value.trim();
      try { if (v) sessionStorage.setItem(TOKEN_KEY, v); } catch (err) { /* storage disabled: nothing kept */ }
      $('token').value = '';
      tokenAccess = 'none';
      updateButtons();
      checkToken();
      restartStream();
    });
    $('token-clear').addEventListener('click', () => {
      try { sessionStorage.removeItem(TOKEN_KEY); } catch (err) { /* nothing kept */ }
      tokenAccess = 'none';
      updateButtons();
      restartStream();
    });
    updateButtons();
    checkToken();
  }

  // confirmAction asks before a destructive action; it resolves to true
  // when the operator confirms.
  function confirmAction(title, text, yes) {
    const d = $('confirm');
    if (!d || typeof d.showModal !== 'function') return Promise.resolve(window.confirm(text));
    $('confirm-title').textContent = title;
    $('confirm-text').textContent = text;
    $('confirm-yes').textContent = yes;
    d.returnValue = '';
    d.showModal();
    return new Promise((resolve) => d.addEventListener('close', () => resolve(d.returnValue === 'yes'), { once: true }));
  }

  // ---- live updates --------------------------------------------------

  // live opens the API's event stream once and hands its events to
  // handlers; it reports whether the stream is up through liveUp(). The
  // stream is read with fetch, not EventSource, so that it can carry the
  // token (EventSource sends no Authorization header).
  let stream = null;
  let streamUp = false;
  const liveHandlers = { stats: [], instance: [] };
  function setLiveState(text, cls) {
    const s = $('live-state');
    if (!s) return;
    s.textContent = text;
    s.className = 'live ' + (cls || '');
  }
  function live(kind, fn) {
    liveHandlers[kind].push(fn);
    if (stream || typeof fetch !== 'function' || typeof TextDecoder !== 'function' || typeof AbortController !== 'function') return;
    connectStream();
  }
  function restartStream() {
    if (!stream) return;
    stream.abort();
    connectStream();
  }
  // dispatchFrame hands one server-sent event ("event:" and "data:"
  // lines) to its handlers.
  function dispatchFrame(frame) {
    let kind = 'message';
    let data = '';
    for (const line of frame.split('\n')) {
      if (line.startsWith('event:')) kind = line.slice(6).trim();
      else if (line.startsWith('data:')) data += line.slice(5).trimStart();
    }
    if (!data || !liveHandlers[kind]) return;
    let v;
    try { v = JSON.parse(data); } catch (err) { return; }
    for (const h of liveHandlers[kind]) h(v);
  }
  async function connectStream() {
    const ctl = new AbortController();
    const mine = { abort: () => ctl.abort() };
    stream = mine;
    const headers = { Accept: 'text/event-stream' };
    if (token()) headers.Authorization = 'Bearer ' + token();
    let retry = true;
    try {
      const r = await fetch(API + 'events', { headers: headers, cache: 'no-store', signal: ctl.signal });
      if (!r.ok || !r.body) {
        // Off (503, no --timeline) or refused (401/403: a token comes
        // later, restartStream): the pages poll.
        retry = false;
        throw new Error(String(r.status));
      }
      streamUp = true;
      setLiveState('live', 'on');
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true }).replace(/\r\n/g, '\n');
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          dispatchFrame(buf.slice(0, i));
          buf = buf.slice(i + 2);
        }
      }
    } catch (err) { /* ended: see below */ }
    if (stream !== mine || ctl.signal.aborted) return;
    streamUp = false;
    if (!retry) {
      setLiveState('polling', 'off');
      return;
    }
    setLiveState('reconnecting…', 'off');
    setTimeout(() => { if (stream === mine) connectStream(); }, 2000);
  }
  function liveUp() { return streamUp; }

  // every runs fn now and then every ms milliseconds, one run at a time.
  function every(ms, fn) {
    let running = false;
    const tick = async () => {
      if (running || document.hidden) return;
      running = true;
      try { await fn(); } finally { running = false; }
    };
    tick();
    return setInterval(tick, ms);
  }

  // ---- processes page ------------------------------------------------

  // rates turns successive Stats of each process version into tx/s and
  // the mean latency of the exchanges in between.
  const lastStats = new Map();
  function rates(p, now) {
    const key = `${p.name}#${p.version}`;
    const s = p.stats || {};
    const prev = lastStats.get(key);
    const overall = s.exchanges ? s.exchangeNs / s.exchanges : null;
    // Two updates close together (the stream's and a poll's) measure
    // nothing: keep the last measure until half a second has passed.
    if (prev && now - prev.t < 500) return prev.r || { tps: null, latency: overall, recent: false };
    let r;
    const dEx = prev ? (s.exchanges || 0) - prev.ex : 0;
    if (!prev) r = { tps: null, latency: overall, recent: false };
    else if (dEx > 0) r = { tps: dEx / ((now - prev.t) / 1000), latency: ((s.exchangeNs || 0) - prev.ns) / dEx, recent: true };
    else r = { tps: 0, latency: overall, recent: false };
    lastStats.set(key, { t: now, ex: s.exchanges || 0, ns: s.exchangeNs || 0, r: r });
    return r;
  }

  function endpointList(eps) {
    const ul = el('ul', { class: 'plain endpoints' });
    for (const ep of eps || []) {
      const path = String(ep.path || '');
      ul.append(el('li', {},
        path.startsWith('/')
          ? el('a', { href: `${ENDPOINTS}${path}?wsdl`, title: `${ep.service} ${ep.port}, SOAP ${ep.soap}: WSDL`, text: path })
          : el('span', { text: path }),
        ' ', el('span', { class: 'ops', text: (ep.operations || []).join(', ') })));
    }
    return ul;
  }

  function renderProcesses(list) {
    const now = performance.now();
    const rows = (list || []).map((p) => {
      const r = rates(p, now);
      const s = p.stats || {};
      const name = el('td', {}, processLink(p.name, p.version), ' ',
        el('a', { class: 'sub', href: `${PREFIX}instances?${new URLSearchParams({ process: p.name, version: p.version })}`, text: 'instances' }));
      if (p.inMemory) name.append(el('span', { class: 'tag', text: 'in-memory' }));
      for (const w of p.warnings || []) name.append(el('div', { class: 'warning', text: w }));
      return el('tr', { data: { process: p.name, version: String(p.version) } },
        name, num(p.version), el('td', {}, stateBadge(p.state)), el('td', {}, endpointList(p.endpoints)),
        td(r.tps === null ? '…' : r.tps.toFixed(1), 'num tps'),
        td(fmtDur(r.latency) + (r.latency !== null && !r.recent ? ' (avg)' : ''), 'num latency'),
        num(s.started), num(s.completed), num(s.faulted), num(s.terminated), num(s.suspended), num(s.exchanges),
        td((p.nodeStats || []).map((n) => `${n.node} (v${n.version}: ${n.stats.exchanges})`).join(', ') || '—', 'nodes'));
    });
    fill(document.querySelector('#processes-table tbody'), rows, 'processes-empty');
  }

  // partialBox shows which nodes' part of an answer is missing.
  function partialBox(id, partial) {
    const box = $(id);
    box.replaceChildren(...(partial || []).map((p) => el('div', { text: `Missing from this list: node ${p}` })));
    box.hidden = !(partial && partial.length);
  }

  function fmtUptime(s) {
    s = Math.floor(s || 0);
    const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
    return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : `${m}m ${s % 60}s`;
  }

  function renderCluster(c) {
    $('nodes').hidden = !c.name; // one node alone: nothing to show
    $('cluster-name').textContent = c.name || '';
    const rows = (c.nodes || []).map((n) => {
      const s = n.stats;
      return el('tr', { data: { node: n.id } },
        el('td', {}, n.id, n.self ? el('span', { class: 'tag', text: 'this node' }) : null),
        td(n.url || '—'), td(n.admin || '—'),
        td(s ? fmtUptime(s.uptimeS) : '—', 'num'), td(s ? String(s.exchanges) : '—', 'num'),
        td(s && s.inFlight >= 0 ? String(s.inFlight) : '—', 'num'), td(s ? s.txPerSec.toFixed(1) : '—', 'num'),
        td((n.versions || []).map(localName).join(', ')));
    });
    fill(document.querySelector('#nodes-table tbody'), rows, null);
    partialBox('nodes-partial', c.partial);
  }

  function renderBundles(list) {
    const failed = [];
    const rows = (list || []).map((b) => {
      if (b.state === 'failed') failed.push(b);
      return el('tr', { data: { bundle: b.name } },
        td(b.name), el('td', {}, stateBadge(b.state)), td(b.version ? String(b.version) : '—', 'num'),
        td(fmtTime(b.deployed)), el('td', {}, ...(b.processes || []).map((n) => el('div', {}, processLink(n)))));
    });
    fill(document.querySelector('#bundles-table tbody'), rows, 'bundles-empty');
    const boxes = failed.map((b) => el('div', { class: 'error-box', role: 'alert', data: { bundle: b.name } },
      el('h3', { text: `Bundle ${b.name} failed to deploy` }),
      el('p', {
        text: (b.processes && b.processes.length)
          ? `The version deployed before keeps serving (version ${b.version || '?'}).`
          : 'Nothing of it is served.',
      }),
      el('ul', { class: 'errors' }, ...(b.errors || ['no detail given']).map((e) => el('li', {}, el('code', { text: e }))))));
    $('deploy-error-list').replaceChildren(...boxes);
    $('deploy-errors').hidden = boxes.length === 0;
  }

  function pageProcesses() {
    let lastStatsEvent = 0;
    live('stats', (list) => { lastStatsEvent = Date.now(); renderProcesses(list); });
    every(2000, async () => {
      try {
        const [procs, bundles, cluster] = await Promise.all([
          Date.now() - lastStatsEvent > 3000 ? api('processes') : null,
          api('bundles'),
          api('cluster'),
        ]);
        if (procs) renderProcesses(procs);
        renderBundles(bundles);
        renderCluster(cluster);
        if (!liveUp()) setLiveState('polling every 2 s', 'off');
      } catch (err) {
        setLiveState(`cannot reach the API: ${err.message}`, 'err');
      }
    });
  }

  // ---- process page --------------------------------------------------

  function outlineNode(a, total) {
    const share = total > 0 ? Math.min(1, a.ns / total) : 0;
    const bar = el('span', { class: 'bar', role: 'img', 'aria-label': `${(share * 100).toFixed(1)}% of the time` }, el('span', { class: 'fill' }));
    bar.firstChild.style.width = `${(share * 100).toFixed(2)}%`;
    const row = el('div', { class: 'row', data: { kind: a.kind, name: a.name || '' } },
      el('span', { class: 'what' }, el('span', { class: 'kind', text: a.kind }), a.name ? ' ' : null, a.name ? el('span', { class: 'name', text: a.name }) : null),
      el('span', { class: 'pos', text: a.position || '' }),
      el('span', { class: 'count', title: 'completions in sampled instances', text: String(a.count || 0) }),
      el('span', { class: 'mean', title: 'mean time', text: a.count ? fmtDur(a.ns / a.count) : '—' }),
      bar,
      el('span', { class: 'pct', text: total > 0 ? `${(share * 100).toFixed(1)}%` : '' }));
    const li = el('li', { class: 'activity' }, row);
    if (a.children && a.children.length) li.append(el('ul', {}, ...a.children.map((c) => outlineNode(c, total))));
    return li;
  }

  function pageProcess() {
    const q = new URLSearchParams(location.search);
    const name = q.get('name') || '';
    const version = parseInt(q.get('version') || '0', 10) || 0;
    if (!name) { showError('process-error', 'No process named: open a process from the processes page.'); return; }
    $('process-title').textContent = localName(name);
    document.title = `${localName(name)} · orchd console`;

    const load = async () => {
      let p;
      try {
        p = await api(`processes/${enc(name)}${version ? `?version=${version}` : ''}`);
      } catch (err) { showError('process-error', err); return; }
      showError('process-error', null);
      $('process-state').replaceChildren(stateBadge(p.state, 'process-state-badge'));
      $('process-meta').textContent = `${p.name} · version ${p.version} · bundle ${p.bundle} · ${p.file}` +
        `${p.inMemory ? ' · in-memory' : ' · persistent'} · deployed ${fmtTime(p.deployed)}`;
      const root = p.outline;
      $('outline-hint').textContent = root
        ? `Per activity: completions and mean time in the instances sampled (one in ${p.sampleEvery || 1}); the bar is its share of the process's time (until an instance completes, of the longest activity's).`
        : 'No outline for this version.';
      const head = el('div', { class: 'row head', 'aria-hidden': 'true' },
        el('span', { text: 'Activity' }), el('span', { text: 'Position' }), el('span', { class: 'count', text: 'Count' }),
        el('span', { class: 'mean', text: 'Mean' }), el('span', { text: 'Share of time' }), el('span'));
      const ul = el('ul', { class: 'tree', id: 'outline-tree' });
      // Bars are shares of the process's time; until an instance has
      // completed, of the activity that took longest.
      const most = (a) => Math.max(a.ns || 0, ...(a.children || []).map(most));
      if (root) ul.append(outlineNode(root, most(root)));
      $('outline').replaceChildren(...(root ? [head, ul] : []));
      $('endpoints').replaceChildren(...endpointList(p.endpoints).childNodes);
      // Awaited: the versions' buttons below appear once the page no
      // longer moves.
      await showDiagram(`processes/${enc(p.name)}/diagram?version=${p.version}`,
        'Each activity shaded by its share of the time, with its completions, mean and p99 time in the timed instances and its faults (hover for details).');

      let all = [];
      try { all = (await api('processes')).filter((x) => x.name === p.name); } catch (err) { all = [p]; }
      const rows = all.map((v) => {
        const act = v.state === 'active' ? 'retire' : 'activate';
        const b = el('button', {
          type: 'button', id: `${act}-v${v.version}`, class: act === 'retire' ? 'danger' : '',
          data: { versionAction: act, version: String(v.version) }, text: act,
        });
        b.addEventListener('click', () => versionAction(p.name, v.version, act));
        const s = v.stats || {};
        return el('tr', { data: { version: String(v.version) }, class: v.version === p.version ? 'current' : '' },
          el('td', {}, el('a', { href: `${PREFIX}process?${new URLSearchParams({ name: v.name, version: v.version })}`, text: `version ${v.version}` })),
          el('td', {}, stateBadge(v.state)), td(v.bundle), td(fmtTime(v.deployed)),
          num(s.started), num(s.completed), num(s.exchanges), el('td', {}, b));
      });
      fill(document.querySelector('#versions-table tbody'), rows);
      updateButtons();
    };
    const versionAction = async (n, v, act) => {
      if (act === 'retire' && !await confirmAction(`Retire version ${v}?`,
        `Version ${v} of ${localName(n)} stops serving new requests; its running instances finish.`, 'Retire')) return;
      const res = $('version-result');
      try {
        await api(`processes/${enc(n)}/versions/${v}/${act}`, 'POST');
        res.className = 'result ok';
        res.textContent = `${act}: version ${v} done.`;
      } catch (err) {
        res.className = 'result err';
        res.textContent = `${act} version ${v} failed: ${err.message}`;
      }
      load();
    };
    every(3000, load);
  }

  // ---- instances page ------------------------------------------------

  const filterNames = ['process', 'version', 'state', 'correlation', 'correlationSet', 'startedAfter', 'startedBefore', 'activeAfter', 'activeBefore', 'limit'];
  const timeFilters = new Set(['startedAfter', 'startedBefore', 'activeAfter', 'activeBefore']);

  // toLocalInput turns an RFC 3339 time into a datetime-local value.
  function toLocalInput(s) {
    const d = new Date(s);
    if (isNaN(d)) return '';
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  function pageInstances() {
    const form = $('filters');
    const tbody = document.querySelector('#instances-table tbody');
    let cursors = ['']; // cursors[i] lists page i+1
    let filters = new URLSearchParams();

    // The form starts from the page's query (a shared or reloaded link).
    const start = new URLSearchParams(location.search);
    for (const n of filterNames) {
      const v = start.get(n);
      if (!v) continue;
      filters.set(n, v);
      const input = form.elements[n];
      if (input.tagName === 'SELECT' && ![...input.options].some((o) => o.value === v)) input.append(el('option', { value: v, text: localName(v) }));
      input.value = timeFilters.has(n) ? toLocalInput(v) : v;
    }

    const readForm = () => {
      const q = new URLSearchParams();
      for (const n of filterNames) {
        let v = (form.elements[n].value || '').trim();
        if (!v) continue;
        if (timeFilters.has(n)) {
          const d = new Date(v);
          if (isNaN(d)) continue;
          v = d.toISOString();
        }
        q.set(n, v);
      }
      return q;
    };

    let seq = 0;
    const load = async () => {
      const my = ++seq;
      const q = new URLSearchParams(filters);
      const cur = cursors[cursors.length - 1];
      if (cur) q.set('after', cur);
      let page;
      try {
        page = await api(`instances?${q}`);
      } catch (err) {
        if (my === seq) showError('instances-error', err);
        return;
      }
      if (my !== seq) return; // a newer listing is on its way
      showError('instances-error', null);
      const list = page.instances || [];
      fill(tbody, list.map((i) => el('tr', { data: { instanceId: i.id, state: i.state, process: i.process } },
        el('td', {}, instanceLink(i.id), i.inMemory ? el('span', { class: 'tag', text: 'in-memory' }) : null),
        el('td', {}, processLink(i.process, i.version)), td(i.version ? String(i.version) : '—', 'num'),
        el('td', {}, stateBadge(i.state)), td(fmtTime(i.started)), td(fmtTime(i.lastActive)),
        td(Object.entries(i.correlations || {}).map(([k, v]) => `${k}=${v}`).join(', ')), td(i.fault || '', 'fault'), td(i.node || '—', 'node'))), 'instances-empty');
      partialBox('instances-partial', page.partial);
      $('page-next').disabled = !page.next;
      $('page-next').dataset.next = page.next || '';
      $('page-prev').disabled = cursors.length < 2;
      $('page-first').disabled = cursors.length < 2;
      $('page-number').textContent = `page ${cursors.length}`;
      $('instances-status').textContent = `${list.length} instance${list.length === 1 ? '' : 's'} on this page` +
        `${page.next ? ', more on the next' : ''} (${page.scanned} records scanned) · updated ${fmtTime(new Date().toISOString())}`;
      tbody.dataset.loaded = String(my);
    };

    form.addEventListener('submit', (e) => {
      e.preventDefault();
      filters = readForm();
      cursors = [''];
      history.replaceState(null, '', `${PREFIX}instances${filters.toString() ? '?' + filters : ''}`);
      load();
    });
    $('f-reset').addEventListener('click', () => {
      form.reset();
      for (const n of filterNames) form.elements[n].value = '';
      form.requestSubmit();
    });
    $('page-next').addEventListener('click', () => {
      const n = $('page-next').dataset.next;
      if (n) { cursors.push(n); load(); }
    });
    $('page-prev').addEventListener('click', () => { if (cursors.length > 1) { cursors.pop(); load(); } });
    $('page-first').addEventListener('click', () => { cursors = ['']; load(); });

    // The process choices: every process the server knows.
    api('processes').then((list) => {
      const sel = form.elements.process;
      const have = new Set([...sel.options].map((o) => o.value));
      for (const n of [...new Set((list || []).map((p) => p.name))].sort()) {
        if (!have.has(n)) sel.append(el('option', { value: n, title: n, text: localName(n) }));
      }
    }).catch(() => { /* the list shows the error */ });

    load();
    setInterval(() => { if ($('auto-refresh').checked && !document.hidden) load(); }, 5000);
  }

  // ---- instance page: XML --------------------------------------------

  // xmlView shows XML text indented and lightly highlighted. It builds
  // text nodes only, so nothing in a value is ever read as HTML; text
  // that is not XML is shown as it is.
  function xmlView(text) {
    const pre = el('pre', { class: 'xml' });
    const nodes = parseXML(text);
    if (!nodes) { pre.textContent = text; return pre; }
    for (const n of nodes) xmlNode(pre, n, 0);
    if (!pre.childNodes.length) pre.textContent = text;
    return pre;
  }
  function parseXML(text) {
    const p = new DOMParser();
    const ok = (d) => d && d.documentElement && !d.getElementsByTagName('parsererror').length;
    let d = p.parseFromString(text, 'application/xml');
    if (ok(d)) return [...d.childNodes];
    // Several elements or text: parse them inside a wrapper.
    d = p.parseFromString(`<orchd-wrap>${text.replace(/^\s*<\?xml[^>]*\?>/, '')}</orchd-wrap>`, 'application/xml');
    if (ok(d)) return [...d.documentElement.childNodes];
    return null;
  }
  const span = (cls, text) => el('span', { class: cls, text: text });
  function xmlOpen(e, out, selfClose) {
    out.append(span('x-p', '<'), span('x-tag', e.nodeName));
    for (const a of e.attributes) out.append(' ', span('x-attr', a.name), span('x-p', '="'), span('x-val', a.value), span('x-p', '"'));
    out.append(span('x-p', selfClose ? '/>' : '>'));
  }
  function xmlNode(out, n, depth) {
    const ind = '  '.repeat(depth);
    switch (n.nodeType) {
      case Node.ELEMENT_NODE: {
        const kids = [...n.childNodes].filter((k) => !(k.nodeType === Node.TEXT_NODE && !k.nodeValue.trim()));
        out.append(ind);
        if (!kids.length) { xmlOpen(n, out, true); out.append('\n'); return; }
        xmlOpen(n, out, false);
        if (kids.length === 1 && (kids[0].nodeType === Node.TEXT_NODE || kids[0].nodeType === Node.CDATA_SECTION_NODE)) {
          out.append(span('x-text', kids[0].nodeValue.trim()));
        } else {
          out.append('\n');
          for (const k of kids) xmlNode(out, k, depth + 1);
          out.append(ind);
        }
        out.append(span('x-p', '</'), span('x-tag', n.nodeName), span('x-p', '>'), '\n');
        return;
      }
      case Node.TEXT_NODE:
      case Node.CDATA_SECTION_NODE: {
        const t = n.nodeValue.trim();
        if (t) out.append(ind, span('x-text', t), '\n');
        return;
      }
      case Node.COMMENT_NODE:
        out.append(ind, span('x-comment', `<!--${n.nodeValue}-->`), '\n');
        return;
      case Node.PROCESSING_INSTRUCTION_NODE:
        out.append(ind, span('x-comment', `<?${n.target} ${n.data}?>`), '\n');
        return;
      default:
    }
  }

  // ---- instance page -------------------------------------------------

  function eventDetail(e) {
    const parts = [];
    if (e.variable) parts.push(`variable ${e.variable}`);
    if (e.correlationSet) parts.push(`correlation set ${e.correlationSet}${e.value ? ' = ' + e.value : ''}`);
    if (e.partner) parts.push(`partner ${e.partner}${e.operation ? ' · ' + e.operation : ''}`);
    else if (e.operation) parts.push(`operation ${e.operation}`);
    if (e.fault) parts.push(`fault ${e.fault}`);
    if (e.detail) parts.push(e.detail);
    return parts.join(' · ');
  }
  function timelineRow(e) {
    return el('tr', { data: { kind: e.kind }, class: e.fault ? 'bad' : '' },
      td(fmtTimeMs(e.time)), td(e.kind, 'kind'),
      td([e.activity, e.name].filter(Boolean).join(' ')), td(e.position || '', 'pos'),
      td(eventDetail(e)), td(e.durationNs ? fmtDur(e.durationNs) : '', 'num'));
  }

  function pageInstance() {
    const id = new URLSearchParams(location.search).get('id') || '';
    $('instance-id').textContent = id;
    document.title = `Instance ${id} · orchd console`;
    if (!id) { showError('instance-error', 'No instance named: open one from the instances page.'); return; }
    let gone = false;
    let streamed = []; // events that came over the stream after the last load
    let lastTimeline = [];

    const renderTimeline = () => {
      const seen = new Set(lastTimeline.map((e) => `${e.time}|${e.kind}|${e.activity || ''}|${e.name || ''}`));
      const extra = streamed.filter((e) => !seen.has(`${e.time}|${e.kind}|${e.activity || ''}|${e.name || ''}`));
      const all = lastTimeline.concat(extra);
      fill(document.querySelector('#timeline-table tbody'), all.map(timelineRow));
      // With the stream up, events are kept: this instance's are gone.
      $('timeline-note').hidden = all.length > 0 || liveUp();
      $('timeline-gone').hidden = all.length > 0 || !liveUp();
      $('timeline-table').hidden = all.length === 0;
    };

    const render = (d) => {
      $('instance-state').replaceChildren(stateBadge(d.state, 'instance-state-badge'));
      const dl = $('instance-summary');
      const item = (k, ...v) => [el('dt', { text: k }), el('dd', {}, ...v)];
      dl.replaceChildren(
        ...item('Process', processLink(d.process, d.version)),
        ...item('Version', String(d.version || '—')),
        ...item('Kind', d.inMemory ? 'in-memory' : 'persistent'),
        ...item('Started', fmtTime(d.started)),
        ...item('Last active', fmtTime(d.lastActive)),
        // The failure an instance is suspended on has a box of its own.
        ...(d.fault && !d.failure ? item(d.state === 'suspended' ? 'Why' : 'Fault', el('span', { class: 'fault', text: d.fault })) : []));

      const acts = new Set(d.actions || []);
      let shown = 0;
      for (const b of document.querySelectorAll('#actions button[data-action]')) {
        b.hidden = !acts.has(b.dataset.action);
        if (!b.hidden) shown++;
      }
      $('actions-none').hidden = shown > 0;

      const f = d.failure;
      $('failure-section').hidden = !f;
      if (f) {
        $('failure').replaceChildren(
          el('p', {}, el('strong', { text: f.activity }), f.position ? ` at ${f.position}` : ''),
          el('p', { class: 'reason', text: f.reason }),
          el('p', { class: 'meta', text: `${f.attempts} attempt${f.attempts === 1 ? '' : 's'}, last at ${fmtTime(f.time)}. Retry runs it again, fault throws it to its scope, cancel skips it.` }));
      }

      fill(document.querySelector('#branches-table tbody'), (d.branches || []).map((b) =>
        el('tr', {}, td(b.activity), td(b.position || '', 'pos'), td(b.waiting || 'running'))), 'branches-empty');
      fill(document.querySelector('#correlations-table tbody'), Object.keys(d.correlations || {}).sort().map((k) =>
        el('tr', {}, td(k), el('td', {}, el('code', { text: d.correlations[k] })))), 'correlations-empty');
      fill($('alarms'), (d.alarms || []).map((a) => el('li', { text: fmtTime(a) })), 'alarms-empty');

      const vars = d.variables || {};
      const closed = new Set([...document.querySelectorAll('#variables details:not([open])')].map((x) => x.dataset.variable));
      fill($('variables'), Object.keys(vars).sort().map((k) =>
        el('details', { class: 'variable', open: !closed.has(k), data: { variable: k } },
          el('summary', {}, el('code', { text: k })), xmlView(vars[k]))), 'variables-empty');

      if (d.version && d.activities && d.activities.length) {
        showDiagram(`processes/${enc(d.process)}/diagram?${new URLSearchParams({ version: d.version, instance: id })}`,
          'Where the instance stands: completed green, running blue, waiting yellow, failed or faulted red, skipped grey (hover for details).');
      } else {
        $('diagram-section').hidden = true;
      }
      lastTimeline = d.timeline || [];
      streamed = [];
      renderTimeline();
      updateButtons();
    };

    let lastJSON = '';
    const load = async () => {
      if (gone) return;
      try {
        const d = await api(`instances/${enc(id)}`);
        // Unchanged: leave the page as it is (open details, a selection).
        const j = JSON.stringify(d);
        if (j !== lastJSON || streamed.length) render(d);
        lastJSON = j;
        showError('instance-error', null);
      } catch (err) {
        if (err.status === 404) {
          gone = true;
          showError('instance-error', `Instance ${id} is not there (any more): ${err.message}.`);
          $('instance-state').replaceChildren(stateBadge('gone', 'instance-state-badge'));
          for (const b of document.querySelectorAll('#actions button[data-action]')) b.hidden = true;
          return;
        }
        showError('instance-error', err);
      }
    };

    for (const b of document.querySelectorAll('#actions button[data-action]')) {
      b.addEventListener('click', async () => {
        const a = b.dataset.action;
        if (b.dataset.destructive && !await confirmAction(`${a[0].toUpperCase()}${a.slice(1)} instance ${id}?`, {
          terminate: 'The instance ends now, as an <exit> would: no handler runs. This cannot be undone.',
          delete: 'The instance is removed from the store (a live one is terminated first). This cannot be undone.',
          fault: 'The failure is thrown as a BPEL fault at the failed activity, for its scope\'s handlers.',
          cancel: 'The failed activity is skipped: it completes without effect and the instance goes on after it.',
        }[a] || `Apply ${a}?`, a)) return;
        const res = $('action-result');
        res.className = 'result';
        res.textContent = `${a}…`;
        try {
          const r = await api(`instances/${enc(id)}/${a}`, 'POST');
          res.className = 'result ok';
          res.textContent = `${a}: done${r && r.state ? `; the instance is ${r.state}` : ''}.`;
        } catch (err) {
          res.className = 'result err';
          res.textContent = `${a} failed: ${err.message}`;
        }
        await load();
      });
    }

    // Live: the instance's events as they happen, and a fresh look at it
    // shortly after each; a slower poll when there is no stream.
    let reload = null;
    live('instance', (e) => {
      if (e.instance !== id) return;
      streamed.push(e);
      renderTimeline();
      clearTimeout(reload);
      reload = setTimeout(load, 300);
    });
    every(3000, async () => {
      await load();
      renderTimeline();
      setLiveState(liveUp() ? 'live' : 'polling every 3 s', liveUp() ? 'on' : 'off');
    });
  }

  // ---- start ---------------------------------------------------------

  setupToken();
  const pagesById = { processes: pageProcesses, process: pageProcess, instances: pageInstances, instance: pageInstance };
  const start = pagesById[body.dataset.page];
  if (start) start();
})();
