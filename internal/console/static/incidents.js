// orchd console, the incidents page: what needs an operator (suspended
// instances, failed in-memory exchanges), their actions and a variable's
// change before a retry. Plain script, no dependencies; it shares the
// admin token console.js keeps (sessionStorage) and nothing else.
'use strict';
(() => {
  const body = document.body;
  if (body.dataset.page !== 'incidents') return;
  const PREFIX = body.dataset.prefix || '/console/';
  const API = body.dataset.api || '/api/v1/';
  const $ = (id) => document.getElementById(id);
  const token = () => { try { return sessionStorage.getItem('orchd.adminToken') || ''; } catch (e) { return ''; } };

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
  const localName = (n) => { const i = (n || '').lastIndexOf('}'); return i >= 0 ? n.slice(i + 1) : (n || ''); };
  const fmtTime = (s) => { const d = new Date(s); return isNaN(d) ? s : d.toISOString().replace('T', ' ').slice(0, 19); };

  async function api(path, method, payload) {
    const headers = { Accept: 'application/json' };
    if (token()) headers.Authorization = 'Bearer ' + token();
    const init = { method: method || 'GET', headers: headers, cache: 'no-store' };
    if (payload !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(payload);
    }
    const r = await fetch(API + path, init);
    const text = await r.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
    if (!r.ok) throw new Error(`${r.status} ${data && data.error ? data.error : text.trim() || r.statusText}`);
    return data;
  }

  function say(msg, bad) {
    const box = $('incidents-status');
    box.textContent = msg;
    box.className = bad ? 'error-box' : 'note';
    box.hidden = !msg;
  }

  function filterQuery() {
    const q = new URLSearchParams();
    for (const f of ['process', 'fault', 'activity']) {
      const v = $('incident-' + f).value.trim();
      if (v) q.set(f, v);
    }
    return q;
  }

  async function act(id, action) {
    try {
      const r = await api(`instances/${encodeURIComponent(id)}/${action}`, 'POST');
      say(`${id}: ${action}: ${r.state}`);
    } catch (err) { say(`${id}: ${action}: ${err.message}`, true); }
    await load();
  }

  function row(inc) {
    const actions = el('td', { class: 'actions' });
    for (const a of inc.actions || []) {
      if (['retry', 'fault', 'cancel', 'resume', 'terminate'].includes(a)) {
        actions.append(el('button', { type: 'button', class: 'act', data: { action: a, id: inc.id }, text: a }));
      }
    }
    if (inc.kind === 'suspended' && !inc.inMemory) {
      actions.append(el('button', { type: 'button', class: 'act', data: { action: 'set-variable', id: inc.id }, text: 'set variable' }));
    }
    const id = inc.kind === 'suspended'
      ? el('a', { href: `${PREFIX}instance?${new URLSearchParams({ id: inc.id })}`, text: inc.id }) : inc.id;
    return el('tr', { data: { id: inc.id, kind: inc.kind } },
      el('td', {}, id), el('td', { text: inc.kind }), el('td', { text: localName(inc.process) }),
      el('td', { class: 'num', text: String(inc.version || '') }), el('td', { text: fmtTime(inc.time) }),
      el('td', { class: 'activity', text: [inc.activity, inc.position].filter(Boolean).join(' ') }),
      el('td', { class: 'fault', title: inc.fault || '', text: localName(inc.fault) }),
      el('td', { class: 'reason', text: inc.reason || '' }), actions);
  }

  function details(inc) {
    const vars = Object.keys(inc.variables || {}).sort();
    if (!vars.length && !inc.faultData) return null;
    const dl = el('dl', { class: 'vars' });
    if (inc.faultData) dl.append(el('dt', { text: 'fault data' }), el('dd', {}, el('pre', { text: inc.faultData })));
    for (const v of vars) dl.append(el('dt', { text: v }), el('dd', {}, el('pre', { text: inc.variables[v] })));
    return el('details', { class: 'incident-vars', data: { id: inc.id } },
      el('summary', { text: `${inc.id} (${localName(inc.process)}): variables at the failure` }), dl);
  }

  async function load() {
    try {
      const l = await api('incidents?' + filterQuery());
      const incs = l.incidents || [];
      $('incidents-table').tBodies[0].replaceChildren(...incs.map(row));
      $('incidents-empty').hidden = incs.length > 0;
      $('incident-details').replaceChildren(...incs.map(details).filter(Boolean));
      $('incidents-partial').hidden = !(l.partial && l.partial.length);
      $('incidents-partial').textContent = (l.partial || []).join('; ');
    } catch (err) { say(err.message, true); }
  }

  $('incidents-table').addEventListener('click', (ev) => {
    const b = ev.target.closest('button.act');
    if (!b) return;
    if (b.dataset.action === 'set-variable') {
      $('setvar-id').value = b.dataset.id;
      $('setvar-name').focus();
      return;
    }
    act(b.dataset.id, b.dataset.action);
  });
  $('incident-filter').addEventListener('submit', (ev) => { ev.preventDefault(); load(); });
  $('setvar-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const id = $('setvar-id').value.trim(), name = $('setvar-name').value.trim();
    try {
      await api(`instances/${encodeURIComponent(id)}/variables/${encodeURIComponent(name)}`, 'POST', { value: $('setvar-value').value });
      say(`${id}: ${name} set; retry the instance to run its failed activity again`);
    } catch (err) { say(`${id}: set ${name}: ${err.message}`, true); }
    await load();
  });
  load();
  setInterval(load, 5000);
})();
