'use strict';

(() => {
  const API_BASE = new URL('api/', document.baseURI);
  const GROUPS = ['READY', 'SCHEDULED', 'RUNNING', 'WAITING', 'COMPLETED', 'FAILED', 'CANCELLED'];
  const FINISHED = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);
  const ACTIVE = new Set(['READY', 'SCHEDULED', 'STARTING', 'RUNNING', 'WAITING']);
  const DEFAULT_GROUP = 'FAILED';
  // The bulk actions each group's jobs take (BulkAction.Kind on the server).
  const BULK_ACTIONS = {
    READY: ['cancel', 'run-now', 'run-at', 'priority'],
    SCHEDULED: ['cancel', 'run-now', 'run-at', 'priority'],
    RUNNING: ['cancel'],
    WAITING: ['cancel', 'priority'],
    COMPLETED: ['delete'],
    FAILED: ['rerun', 'delete'],
    CANCELLED: ['delete'],
  };
  const BULK_LABELS = {
    cancel: 'Cancel', 'run-now': 'Run now', 'run-at': 'Run at…', priority: 'Set priority…', delete: 'Delete', rerun: 'Re-run',
  };
  const ACTION_REFRESH_MS = 500;
  const PAGE_SIZE = 50;
  const OVERVIEW_REFRESH_MS = 2000;
  const DETAIL_REFRESH_MS = 1000;
  const RETRY_MS = 3000;
  const STALE_HEARTBEAT_SECONDS = 30;
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const NUMBER = new Intl.NumberFormat('en-US');

  const $ = (id) => document.getElementById(id);
  const view = $('view');

  const app = {
    overview: null,      // the last overview answer: read-only flag, user, task names
    generation: 0,       // bumped on every (re)load; answers for an older generation are dropped
    timer: null,
    busy: false,
    serverOffsetMs: 0,   // server clock minus browser clock, when they differ noticeably
    lastJobsHash: null,  // the jobs list the operator came from, for "Back to jobs"
    message: null,
    actionError: null,
    loadError: null,
    selected: new Set(), // ids of the jobs ticked on the jobs page
  };

  // ---------------------------------------------------------------- DOM building

  function build(ns, tag, attrs, children) {
    const el = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value == null || value === false) continue;
      el.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child == null || child === false) continue;
      el.append(child instanceof Node ? child : String(child));
    }
    return el;
  }

  const h = (tag, attrs, ...children) => build(null, tag, attrs, children);
  const s = (tag, attrs, ...children) => build(SVG_NS, tag, attrs, children);

  // Updates `from` in place to look like `to`, so refreshes keep element identity, focus and scroll.
  function morph(from, to) {
    if (from.nodeType !== Node.ELEMENT_NODE) {
      if (from.nodeValue !== to.nodeValue) from.nodeValue = to.nodeValue;
      return;
    }
    for (const attr of [...from.attributes]) {
      if (!to.hasAttribute(attr.name)) from.removeAttribute(attr.name);
    }
    for (const attr of to.attributes) {
      if (from.getAttribute(attr.name) !== attr.value) from.setAttribute(attr.name, attr.value);
    }
    morphChildren(from, to);
  }

  const keyOf = (node) => (node.nodeType === Node.ELEMENT_NODE ? node.getAttribute('data-key') : null);
  const sameKind = (a, b) => a.nodeType === b.nodeType && a.nodeName === b.nodeName;

  function morphChildren(parent, next) {
    const keyed = new Map();
    for (const child of parent.childNodes) {
      const key = keyOf(child);
      if (key != null) keyed.set(key, child);
    }
    let cursor = parent.firstChild;
    for (const wanted of [...next.childNodes]) {
      const key = keyOf(wanted);
      let match = null;
      if (key != null) {
        match = keyed.get(key) || null;
        keyed.delete(key);
        if (match && !sameKind(match, wanted)) match = null;
      } else if (cursor && keyOf(cursor) == null && sameKind(cursor, wanted)) {
        match = cursor;
      }
      if (match) {
        if (match === cursor) cursor = cursor.nextSibling;
        else parent.insertBefore(match, cursor);
        morph(match, wanted);
      } else {
        parent.insertBefore(wanted, cursor);
      }
    }
    while (cursor) {
      const following = cursor.nextSibling;
      parent.removeChild(cursor);
      cursor = following;
    }
  }

  // Shows a page: morphs it into the current one when the route is unchanged, replaces it otherwise.
  function paint(node) {
    const current = view.firstChild;
    if (current && view.childNodes.length === 1 && view.dataset.page === location.hash && sameKind(current, node)) {
      morph(current, node);
    } else {
      view.replaceChildren(node);
      view.dataset.page = location.hash;
    }
  }

  // ---------------------------------------------------------------- formatting

  const pad = (n) => String(n).padStart(2, '0');
  const num = (n) => (n == null ? '—' : NUMBER.format(n));
  const serverNow = () => Date.now() + app.serverOffsetMs;

  function formatTime(iso) {
    if (!iso) return '—';
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} `
      + `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  function formatClock(ms) {
    const d = new Date(ms);
    return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  }

  function formatDuration(seconds) {
    if (seconds == null || Number.isNaN(seconds)) return '—';
    const sec = Math.max(0, seconds);
    if (sec < 10) return `${Number(sec.toFixed(1))} s`;
    if (sec < 60) return `${Math.floor(sec)} s`;
    if (sec < 3600) return `${Math.floor(sec / 60)} min`;
    if (sec < 86400) {
      const minutes = Math.floor((sec % 3600) / 60);
      return `${Math.floor(sec / 3600)} h${minutes ? ` ${minutes} min` : ''}`;
    }
    const hours = Math.floor((sec % 86400) / 3600);
    return `${Math.floor(sec / 86400)} d${hours ? ` ${hours} h` : ''}`;
  }

  function formatRelative(iso) {
    if (!iso) return '—';
    const t = Date.parse(iso);
    if (Number.isNaN(t)) return iso;
    const seconds = (serverNow() - t) / 1000;
    if (Math.abs(seconds) < 1) return 'now';
    const span = formatDuration(Math.abs(seconds) < 10 ? Math.round(Math.abs(seconds)) : Math.abs(seconds));
    return seconds > 0 ? `${span} ago` : `in ${span}`;
  }

  function time(iso, withRelative) {
    if (!iso) return h('span', { class: 'muted' }, '—');
    return h('time', { datetime: iso, title: `${iso} (${formatRelative(iso)})` },
      formatTime(iso),
      withRelative ? h('span', { class: 'rel' }, ` ${formatRelative(iso)}`) : null);
  }

  function badge(state) {
    if (!state) return h('span', { class: 'muted' }, '—');
    return h('span', { class: `badge badge-${state.toLowerCase()}` }, state);
  }

  function firstLine(text) {
    return text ? String(text).split(/\r?\n/, 1)[0] : '';
  }

  function prettyJson(text) {
    if (text == null || text === '') return '';
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return String(text);
    }
  }

  function countCell(field, value, href, extraClass) {
    const cls = ['num', value ? extraClass : 'zero'].filter(Boolean).join(' ');
    return h('td', { class: cls, 'data-field': field },
      value > 0 && href ? h('a', { href }, num(value)) : num(value));
  }

  // ---------------------------------------------------------------- routing

  function jobsHash(params) {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) {
      if (Array.isArray(value)) value.forEach((v) => query.append(name, v));
      else if (value != null && value !== '') query.set(name, value);
    }
    const text = query.toString();
    return text ? `#/jobs?${text}` : '#/jobs';
  }

  function parseRoute() {
    const raw = location.hash.replace(/^#\/?/, '');
    const q = raw.indexOf('?');
    const path = q < 0 ? raw : raw.slice(0, q);
    const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
    const parts = path.split('/').filter(Boolean);
    if (parts.length === 0 || (parts.length === 1 && parts[0] === 'overview')) return { page: 'overview' };
    if (parts[0] === 'jobs' && parts.length === 1) return { page: 'jobs', params };
    if (parts[0] === 'jobs' && parts.length === 2 && /^\d+$/.test(parts[1])) return { page: 'detail', id: parts[1] };
    if (parts[0] === 'actions' && parts.length === 1) return { page: 'actions', params };
    if (parts[0] === 'history' && parts.length === 1) return { page: 'history', params };
    if (parts[0] === 'workflows' && parts.length === 1) return { page: 'workflows', params };
    if (parts[0] === 'queues' && parts.length === 1) return { page: 'queues', params };
    if (parts[0] === 'queues' && parts.length === 2) return { page: 'queue', name: decodeURIComponent(parts[1]), params };
    if (parts[0] === 'workflows' && parts.length === 2 && /^\d+$/.test(parts[1])) return { page: 'workflow', id: parts[1] };
    if (parts[0] === 'actions' && parts.length === 2 && /^\d+$/.test(parts[1])) return { page: 'action', id: parts[1] };
    return null;
  }

  function stopTimer() {
    clearTimeout(app.timer);
    app.timer = null;
  }

  function later(generation, ms, fn) {
    stopTimer();
    app.timer = setTimeout(() => {
      if (generation !== app.generation) return;
      if (document.hidden) later(generation, ms, fn);
      else fn();
    }, ms);
  }

  function navigate() {
    const route = parseRoute();
    if (!route) {
      location.replace('#/overview');
      return;
    }
    app.message = null;
    app.actionError = null;
    app.loadError = null;
    renderNotices();
    for (const link of document.querySelectorAll('[data-nav]')) {
      const section = route.page === 'detail' ? 'jobs' : route.page === 'action' ? 'actions'
        : route.page === 'workflow' ? 'workflows' : route.page === 'queue' ? 'queues' : route.page;
      if (link.dataset.nav === section) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    if (route.page === 'jobs') app.lastJobsHash = location.hash;
    app.selected = new Set();
    view.replaceChildren(h('p', { class: 'loading' }, 'Loading…'));
    view.dataset.page = location.hash;
    window.scrollTo(0, 0);
    reload();
  }

  // Loads the current page again, keeping what is on screen until the answer arrives.
  function reload() {
    stopTimer();
    const generation = ++app.generation;
    const route = parseRoute();
    if (!route) return;
    if (route.page === 'overview') loadOverview(generation);
    else if (route.page === 'jobs') loadJobs(generation, route.params);
    else if (route.page === 'actions') loadActions(generation, route.params);
    else if (route.page === 'history') loadHistoryPage(generation, route.params);
    else if (route.page === 'workflows') loadWorkflows(generation);
    else if (route.page === 'queues') loadQueues(generation);
    else if (route.page === 'queue') loadQueue(generation, route.name, route.params);
    else if (route.page === 'workflow') loadWorkflow(generation, route.id);
    else if (route.page === 'action') loadAction(generation, route.id);
    else loadDetail(generation, route.id);
  }

  // ---------------------------------------------------------------- API

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  function cookie(name) {
    for (const part of document.cookie.split(';')) {
      const eq = part.indexOf('=');
      if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
      const value = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(value);
      } catch {
        return value;
      }
    }
    return null;
  }

  async function problem(res) {
    let body = null;
    try {
      body = await res.json();
    } catch {
      body = null;
    }
    const text = body && (body.detail || body.title);
    if (res.status === 401) {
      return new ApiError(401, `Not signed in (HTTP 401)${text ? `: ${text}` : '. Sign in and reload the page.'}`);
    }
    if (res.status === 403) {
      return new ApiError(403, `Not allowed (HTTP 403)${text ? `: ${text}` : ': this account may not do this, or the CSRF token is missing.'}`);
    }
    return new ApiError(res.status, text || `The console API answered HTTP ${res.status}.`);
  }

  async function api(path, init = {}) {
    let res;
    try {
      res = await fetch(new URL(path, API_BASE), {
        method: init.method || 'GET',
        headers: { Accept: 'application/json', ...init.headers },
        credentials: 'same-origin',
        cache: 'no-store',
      });
    } catch (e) {
      throw new ApiError(0, `The console API did not answer: ${e.message}`);
    }
    const date = Date.parse(res.headers.get('Date') || '');
    if (!Number.isNaN(date)) {
      const offset = date - Date.now();
      app.serverOffsetMs = Math.abs(offset) > 2000 ? offset : 0;
    }
    if (!res.ok) throw await problem(res);
    const type = res.headers.get('Content-Type') || '';
    if (!type.includes('json')) {
      throw new ApiError(res.status, 'The console API did not answer with JSON; the session may have ended. Reload the page to sign in.');
    }
    return res.json();
  }

  function post(path) {
    const headers = { 'X-PgQueue-Console': '1' };
    const token = cookie('XSRF-TOKEN');
    if (token != null) headers['X-XSRF-TOKEN'] = token;
    return api(path, { method: 'POST', headers });
  }

  const taskPath = (task, action) => `tasks/${encodeURIComponent(task)}/${action}`;

  // ---------------------------------------------------------------- notices and header

  function renderNotices() {
    $('message').textContent = app.message || '';
    $('message-box').hidden = !app.message;
    const error = app.actionError || app.loadError;
    $('error').textContent = error || '';
    $('error-box').hidden = !error;
  }

  function setLoadError(error) {
    const text = error ? error.message : null;
    if (app.loadError !== text) {
      app.loadError = text;
      renderNotices();
    }
  }

  function useOverview(data) {
    app.overview = data;
    $('read-only').hidden = !data.readOnly;
    const user = $('user');
    user.textContent = data.user ? `Signed in as ${data.user}` : '';
    user.hidden = !data.user;
    const statsError = $('stats-error');
    statsError.textContent = data.statsError ? `Statistics: ${data.statsError}` : '';
    statsError.hidden = !data.statsError;
  }

  // Actions are shown only once the server said the console is not read-only.
  const canAct = () => app.overview != null && app.overview.readOnly === false;
  // Job data (payloads, errors…) and searches inside it, unless the server said this user sees none.
  const seesJobData = () => app.overview == null || app.overview.jobData !== false;

  // ---------------------------------------------------------------- actions

  function confirmDialog(text) {
    const dialog = $('confirm');
    $('confirm-text').textContent = text;
    dialog.returnValue = '';
    return new Promise((resolve) => {
      dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
      dialog.showModal();
      dialog.querySelector('[data-test="confirm-cancel"]').focus();
    });
  }

  function describe(data) {
    const { action, task, job } = data;
    const jobName = `job ${job}${task ? ` (${task})` : ''}`;
    switch (action) {
      case 'pause':
        return { path: taskPath(task, 'pause'),
          question: `Pause ${task}? No node claims its jobs until it is resumed; jobs already running finish.` };
      case 'resume':
        return { path: taskPath(task, 'resume'), question: `Resume ${task}? Nodes claim its jobs again.` };
      case 'rerun-failed':
        return { path: taskPath(task, 'rerun-failed'),
          question: `Re-run the ${num(Number(data.count))} failed jobs of ${task}? Each goes back to the queue with a fresh attempt budget, except those whose dedup key an active job holds.` };
      case 'rescue':
        return { path: 'rescue',
          question: 'Rescue expired leases now? Every claimed job whose lease has expired is handled at once instead of at the next rescue interval: it goes back to the queue, or ends when no attempt is left or its cancellation was requested.' };
      case 'rerun':
        return { path: `jobs/${job}/rerun`,
          question: `Re-run ${jobName}? It goes back to the queue with a fresh attempt budget.` };
      case 'cancel':
        return { path: `jobs/${job}/cancel`,
          question: `Cancel ${jobName}? A job that waits is cancelled at once; a running one at its worker's next heartbeat.` };
      case 'redrive':
        return { path: `queues/${encodeURIComponent(data.queue)}/redrive?${new URLSearchParams({ to: data.to })}`,
          question: `Move the ${num(Number(data.visible))} visible messages of ${data.queue} back to ${data.to}? They arrive `
            + 'there visible at once, with a receive count of 0; messages in flight stay.' };
      default:
        return null;
    }
  }

  async function runAction(data) {
    const action = describe(data);
    if (!action || app.busy) return;
    app.busy = true;
    try {
      if (!await confirmDialog(action.question)) return;
      app.message = null;
      app.actionError = null;
      renderNotices();
      try {
        const answer = await post(action.path);
        app.message = (answer && answer.message) || 'Done.';
      } catch (e) {
        app.actionError = e.message;
      }
      renderNotices();
      reload();
    } finally {
      app.busy = false;
    }
  }

  // ---------------------------------------------------------------- overview

  async function loadOverview(generation) {
    try {
      const data = await api('overview');
      if (generation !== app.generation) return;
      useOverview(data);
      paint(renderOverview(data));
      setLoadError(null);
    } catch (e) {
      if (generation !== app.generation) return;
      setLoadError(e);
    }
    later(generation, OVERVIEW_REFRESH_MS, () => loadOverview(generation));
  }

  function renderOverview(data) {
    const tasks = data.tasks || [];
    const actions = canAct();
    return h('div', { class: 'page' },
      h('div', { class: 'page-head' },
        h('h1', null, 'Overview'),
        h('span', { class: 'muted small' }, data.statsTakenAt ? `Statistics taken ${formatTime(data.statsTakenAt)}` : ''),
        h('span', { class: 'spacer' }),
        actions ? h('button', { type: 'button', class: 'btn', 'data-action': 'rescue' }, 'Rescue expired leases now') : null),
      renderTiles(tasks),
      renderHistory(data.history),
      h('section', { class: 'card', 'data-key': 'tasks' },
        h('h2', null, 'Tasks'),
        renderTaskTable(tasks, actions)),
      h('div', { class: 'columns', 'data-key': 'cluster' },
        h('section', { class: 'card' }, h('h2', null, 'Nodes'), renderNodes(data.nodes || [])),
        h('section', { class: 'card' }, h('h2', null, 'Pools on this node'), renderPools(data.pools || []))),
      h('section', { class: 'card', 'data-key': 'schedules' },
        h('h2', null, 'Schedules'),
        renderSchedules(data.schedules || [])));
  }

  function renderTiles(tasks) {
    const sum = (pick) => tasks.reduce((total, t) => total + (pick(t) || 0), 0);
    const ready = sum((t) => t.ready);
    const running = sum((t) => (t.starting || 0) + (t.running || 0));
    const failed = sum((t) => t.failed);
    const oldest = tasks.reduce((max, t) => Math.max(max, t.oldestDueAgeSeconds || 0), 0);
    const misses = sum((t) => t.deadlineMisses);
    const paused = tasks.filter((t) => t.paused).length;
    const tile = (key, label, value, tone) =>
      h('div', { class: `tile${tone ? ` tile-${tone}` : ''}`, 'data-test': `tile-${key}` },
        h('div', { class: 'tile-label' }, label),
        h('div', { class: 'tile-value' }, value));
    return h('div', { class: 'tiles', 'data-key': 'tiles' },
      tile('ready', 'Ready', num(ready)),
      tile('running', 'Running', num(running)),
      tile('failed', 'Failed', num(failed), failed ? 'bad' : null),
      tile('oldest-due', 'Oldest due', tasks.length ? formatDuration(oldest) : '—', oldest >= 60 ? 'warn' : null),
      tile('deadline-misses', 'Deadline misses', num(misses), misses ? 'warn' : null),
      tile('paused', 'Paused tasks', num(paused), paused ? 'warn' : null));
  }

  function renderTaskTable(tasks, actions) {
    const head = h('tr', null,
      h('th', null, 'Task'),
      h('th', { class: 'num' }, 'Ready'),
      h('th', { class: 'num' }, 'Scheduled'),
      h('th', { class: 'num' }, 'Running'),
      h('th', { class: 'num' }, 'Failed'),
      h('th', { class: 'num', title: 'How long the oldest due job has waited' }, 'Oldest due'),
      h('th', { class: 'num', title: 'Claimed jobs whose lease has expired' }, 'Stuck leases'),
      h('th', { class: 'num', title: 'Jobs completed in the last minute' }, 'Done / min'),
      h('th', { class: 'num', title: 'Jobs failed in the last minute' }, 'Failed / min'),
      h('th', { class: 'num', title: 'Jobs started after their delay-tolerance deadline' }, 'Deadline misses'),
      h('th', null, 'State'),
      actions ? h('th', { class: 'actions' }, 'Actions') : null);
    const rows = tasks.map((t) => {
      const running = (t.starting || 0) + (t.running || 0);
      const link = (state) => jobsHash({ task: t.name, state });
      return h('tr', { 'data-task': t.name, 'data-key': `task:${t.name}`, class: t.paused ? 'is-paused' : null },
        h('td', { class: 'name' }, h('a', { href: link(t.failed > 0 ? 'FAILED' : 'READY') }, t.name)),
        countCell('ready', t.ready, link('READY')),
        countCell('scheduled', t.scheduled, link('SCHEDULED')),
        h('td', { class: `num${running ? '' : ' zero'}`, 'data-field': 'running',
          title: `starting ${num(t.starting || 0)}, running ${num(t.running || 0)}` },
          running ? h('a', { href: link('RUNNING') }, num(running)) : num(running)),
        countCell('failed', t.failed, link('FAILED'), 'bad'),
        h('td', { class: `num${t.oldestDueAgeSeconds >= 60 ? ' warn' : ''}`, 'data-field': 'oldestDueAge' },
          t.ready || t.oldestDueAgeSeconds ? formatDuration(t.oldestDueAgeSeconds) : '—'),
        countCell('stuckLeases', t.stuckLeases, null, 'warn'),
        countCell('completedLastMinute', t.completedLastMinute),
        countCell('failedLastMinute', t.failedLastMinute, null, 'bad'),
        countCell('deadlineMisses', t.deadlineMisses, null, 'warn'),
        h('td', { 'data-field': 'paused' },
          h('span', { class: `badge ${t.paused ? 'badge-paused' : 'badge-active'}` }, t.paused ? 'paused' : 'running')),
        actions ? h('td', { class: 'actions' },
          t.paused
            ? h('button', { type: 'button', class: 'btn btn-sm', 'data-action': 'resume', 'data-task': t.name }, 'Resume')
            : h('button', { type: 'button', class: 'btn btn-sm', 'data-action': 'pause', 'data-task': t.name }, 'Pause'),
          h('button', { type: 'button', class: 'btn btn-sm', 'data-action': 'rerun-failed', 'data-task': t.name,
            'data-count': t.failed || 0, disabled: !(t.failed > 0) }, 'Re-run failed')) : null);
    });
    if (!rows.length) {
      rows.push(h('tr', { 'data-key': 'empty' }, h('td', { class: 'empty', colspan: actions ? 12 : 11 }, 'No tasks yet.')));
    }
    return h('div', { class: 'table-wrap' },
      h('table', { class: 'grid', 'data-test': 'task-table' }, h('thead', null, head), h('tbody', null, rows)));
  }

  function niceStep(max, ticks) {
    const raw = Math.max(1, max / ticks);
    const power = 10 ** Math.floor(Math.log10(raw));
    for (const m of [1, 2, 5, 10]) {
      if (m * power >= raw) return Math.max(1, m * power);
    }
    return 10 * power;
  }

  function chartWidth() {
    const box = view.querySelector('.chart-box');
    const width = box ? box.clientWidth : view.clientWidth - 34;
    return Math.max(360, Math.round(width || 900));
  }

  function renderHistory(history) {
    const points = (history && history.points) || [];
    const total = (pick) => points.reduce((sum, p) => sum + (pick(p) || 0), 0);
    const legend = h('div', { class: 'legend' },
      h('span', { class: 'swatch swatch-completed' }), `Completed ${num(total((p) => p.completed))}`,
      h('span', { class: 'swatch swatch-failed' }), `Failed ${num(total((p) => p.failed))}`,
      h('span', { class: 'muted' }, ' per minute, last hour'),
      h('a', { href: '#/history?window=24h', class: 'btn btn-link btn-sm', 'data-test': 'history-link' }, '24 h and 7 days'));
    return h('section', { class: 'card', 'data-key': 'history' },
      h('div', { class: 'card-head' }, h('h2', null, 'Throughput'), legend),
      h('div', { class: 'chart-box' }, countChart(slotsOf(history), chartWidth(), 'history-chart')));
  }

  // The points of a history in at most `maxBars` slots ending now: each slot adds up the steps it
  // spans (the counts named in `sums`; a task history's times are weighted by its starts and runs).
  function slotsOf(history, maxBars = 144, sums = ['completed', 'failed', 'retried', 'started', 'ran']) {
    const stepMs = ((history && history.stepSeconds) || 60) * 1000;
    const windowMs = ((history && history.windowSeconds) || 3600) * 1000;
    const group = Math.max(1, Math.ceil(windowMs / stepMs / maxBars));
    const slotMs = stepMs * group;
    const count = Math.round(windowMs / slotMs);
    const now = Date.now() + app.serverOffsetMs;
    const end = Math.floor(now / slotMs) * slotMs;
    const start = end - (count - 1) * slotMs;
    const slots = Array.from({ length: count }, (_, i) => Object.assign({ at: start + i * slotMs, waitSum: 0,
      waitMaxMs: 0, runSum: 0, runMaxMs: 0, any: false }, Object.fromEntries(sums.map((key) => [key, 0]))));
    for (const p of (history && history.points) || []) {
      const i = Math.floor((Date.parse(p.at) - start) / slotMs);
      if (Number.isNaN(i) || i < 0 || i >= count) continue;
      const slot = slots[i];
      slot.any = true;
      for (const key of sums) slot[key] += p[key] || 0;
      slot.waitSum += (p.waitAvgMs || 0) * (p.started || 0);
      slot.waitMaxMs = Math.max(slot.waitMaxMs, p.waitMaxMs || 0);
      slot.runSum += (p.runAvgMs || 0) * (p.ran || 0);
      slot.runMaxMs = Math.max(slot.runMaxMs, p.runMaxMs || 0);
    }
    for (const slot of slots) {
      slot.waitAvgMs = slot.started ? slot.waitSum / slot.started : null;
      slot.runAvgMs = slot.ran ? slot.runSum / slot.ran : null;
    }
    return { slots, slotMs, start, any: slots.some((slot) => slot.any), unit: slotUnit(slotMs) };
  }

  function slotUnit(ms) {
    if (ms % 3600000 === 0) return ms === 3600000 ? 'hour' : `${ms / 3600000} h`;
    return ms === 60000 ? 'min' : `${ms / 60000} min`;
  }

  function slotLabel(ms, slotMs) {
    return slotMs >= 3600000 ? `${formatTime(new Date(ms).toISOString()).slice(5, 16)}` : formatClock(ms);
  }

  function chartFrame(key, top, panelH, peak, ticks, label, margin, width, format) {
    const step = niceStep(peak, ticks);
    const max = Math.max(step, Math.ceil(peak / step) * step);
    const y = (v) => top + panelH - (v / max) * panelH;
    const grid = [];
    for (let v = 0; v <= max; v += step) {
      grid.push(s('line', { class: v === 0 ? 'axis' : 'gridline', x1: margin.left, x2: width - margin.right, y1: y(v), y2: y(v) }),
        s('text', { class: 'tick', x: margin.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, format(v)));
    }
    grid.push(s('text', { class: 'panel-label', x: margin.left + 4, y: top + 10 }, label));
    return { y, grid: s('g', { 'data-key': `${key}-grid` }, grid) };
  }

  function timeLabels(data, margin, slotW, height) {
    const n = data.slots.length;
    return s('g', { 'data-key': 'labels' }, [0, Math.round(n / 4), Math.round(n / 2), Math.round((3 * n) / 4), n - 1].map((i) =>
      s('text', { class: 'tick', x: margin.left + (i + 0.5) * slotW, y: height - 6,
        'text-anchor': i === 0 ? 'start' : i === n - 1 ? 'end' : 'middle' }, slotLabel(data.start + i * data.slotMs, data.slotMs))));
  }

  // Two panels on one time axis: jobs completed per slot above, failed (own scale) below.
  function countChart(data, width, test) {
    return panelChart(data, width, test, [
      { key: 'completed', label: 'completed', cls: 'bar-completed', height: 120, ticks: 4 },
      { key: 'failed', label: 'failed', cls: 'bar-failed', height: 44, ticks: 1 }],
    (p) => `${num(p.completed)} completed, ${num(p.failed)} failed, ${num(p.retried)} retried`,
    `Jobs completed and failed per ${data.unit}`);
  }

  // Panels of counts stacked on one time axis, each on its own scale, one bar per slot and panel.
  function panelChart(data, width, test, panels, describeSlot, label) {
    const margin = { left: 48, right: 14, top: 10, bottom: 24 };
    const gap = 14;
    const height = margin.top + panels.reduce((sum, panel) => sum + panel.height, 0) + gap * (panels.length - 1)
      + margin.bottom;
    const attrs = { 'data-test': test, class: 'chart', viewBox: `0 0 ${width} ${height}`,
      width: '100%', height, role: 'img', 'aria-label': label };
    if (!data.any) {
      return s('svg', attrs,
        s('text', { x: width / 2, y: height / 2, 'text-anchor': 'middle', class: 'chart-empty' }, 'No history yet'));
    }
    const slotW = (width - margin.left - margin.right) / data.slots.length;
    const barW = Math.max(1, slotW - 2);
    let top = margin.top;
    const frames = panels.map((panel) => {
      const peak = data.slots.reduce((max, p) => Math.max(max, p[panel.key]), 0);
      const frame = chartFrame(panel.key, top, panel.height, peak, panel.ticks, `${panel.label} / ${data.unit}`,
        margin, width, num);
      top += panel.height + gap;
      return frame;
    });
    const bars = data.slots.map((p, i) => {
      if (!p.any) return null;
      const x = margin.left + i * slotW;
      return s('g', { 'data-key': String(p.at), class: 'bar' },
        s('title', null, `${slotLabel(p.at, data.slotMs)}: ${describeSlot(p)}`),
        s('rect', { class: 'hit', x, y: margin.top, width: slotW, height: height - margin.top - margin.bottom }),
        panels.map((panel, n) => p[panel.key] ? s('rect', { class: panel.cls, x: x + 1, y: frames[n].y(p[panel.key]),
          width: barW, height: frames[n].y(0) - frames[n].y(p[panel.key]) }) : null));
    });
    return s('svg', attrs, frames.map((frame) => frame.grid), timeLabels(data, margin, slotW, height),
      s('g', { 'data-key': 'bars' }, bars));
  }

  // One panel of a time in milliseconds: its average per slot as bars, its maximum as a line.
  function timeChart(data, width, test, avgKey, maxKey, label) {
    const margin = { left: 56, right: 14, top: 10, bottom: 24 };
    const panelH = 110;
    const height = margin.top + panelH + margin.bottom;
    const attrs = { 'data-test': test, class: 'chart', viewBox: `0 0 ${width} ${height}`, width: '100%', height,
      role: 'img', 'aria-label': label };
    if (!data.any) {
      return s('svg', attrs,
        s('text', { x: width / 2, y: height / 2, 'text-anchor': 'middle', class: 'chart-empty' }, 'No history yet'));
    }
    const slotW = (width - margin.left - margin.right) / data.slots.length;
    const barW = Math.max(1, slotW - 2);
    const peak = data.slots.reduce((max, p) => Math.max(max, p[maxKey] || 0), 0);
    const frame = chartFrame(test, margin.top, panelH, peak, 3, label, margin, width, (v) => formatMillis(v));
    const bars = [];
    const line = [];
    data.slots.forEach((p, i) => {
      if (p[avgKey] == null) return;
      const x = margin.left + i * slotW;
      bars.push(s('g', { 'data-key': String(p.at) },
        s('title', null, `${slotLabel(p.at, data.slotMs)}: average ${formatMillis(p[avgKey])}, longest ${formatMillis(p[maxKey])}`),
        s('rect', { class: 'bar-completed', x: x + 1, y: frame.y(p[avgKey]), width: barW, height: frame.y(0) - frame.y(p[avgKey]) })));
      line.push(`${x + slotW / 2},${frame.y(p[maxKey] || 0)}`);
    });
    return s('svg', attrs, frame.grid, timeLabels(data, margin, slotW, height), s('g', { 'data-key': 'bars' }, bars),
      line.length > 1 ? s('polyline', { class: 'line-max', points: line.join(' '), fill: 'none' }) : null);
  }

  function formatMillis(ms) {
    if (ms == null) return '—';
    if (ms < 1000) return `${Math.round(ms)} ms`;
    if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s`;
    return `${(ms / 60000).toFixed(1)} min`;
  }

  // ---------------------------------------------------------------- workflows

  function loadWorkflows(generation) {
    return loadPage(generation, 'workflows?limit=100', (page) => renderWorkflows(page.workflows || []),
      () => OVERVIEW_REFRESH_MS);
  }


  function renderWorkflows(workflows) {
    const rows = workflows.map((w) => h('tr', { 'data-key': `workflow:${w.id}`, 'data-workflow-id': w.id },
      h('td', { class: 'num id' }, h('a', { href: `#/workflows/${w.id}`, 'data-test': 'workflow-link' }, w.id)),
      h('td', { class: 'name' }, w.name),
      h('td', null, badge(w.state)),
      h('td', { class: 'num' }, num(w.jobs)),
      h('td', { class: 'num' }, num(w.completed)),
      h('td', { class: 'num' }, num(w.failed)),
      h('td', { class: 'num' }, num(w.cancelled)),
      h('td', null, time(w.createdAt)),
      h('td', null, w.finishedAt ? time(w.finishedAt) : h('span', { class: 'muted' }, '—'))));
    return h('div', { class: 'page' },
      h('div', { class: 'page-head' }, h('h1', null, 'Workflows'),
        h('span', { class: 'muted small' }, 'workflows and batches: the running ones newest first, then the latest finished')),
      h('section', { class: 'card' }, workflows.length
        ? h('div', { class: 'table-wrap' }, h('table', { class: 'grid', 'data-test': 'workflow-table' },
          h('thead', null, h('tr', null, h('th', { class: 'num' }, 'ID'), h('th', null, 'Name'), h('th', null, 'State'),
            h('th', { class: 'num' }, 'Jobs'), h('th', { class: 'num' }, 'Completed'), h('th', { class: 'num' }, 'Failed'),
            h('th', { class: 'num' }, 'Cancelled'), h('th', null, 'Created'), h('th', null, 'Finished'))),
          h('tbody', null, rows)))
        : h('p', { class: 'empty', 'data-test': 'no-workflows' }, 'No workflow or batch is kept.')));
  }

  function loadWorkflow(generation, id) {
    return loadPage(generation, `workflows/${id}`, renderWorkflow,
      (workflow) => (workflow.state === 'RUNNING' ? DETAIL_REFRESH_MS : null));
  }


  function stepMillis(step) {
    return step.startedAt && step.finishedAt ? Date.parse(step.finishedAt) - Date.parse(step.startedAt) : null;
  }

  // The steps as a graph, left to right: a step's column is one past the furthest step it comes after.
  function workflowGraph(workflow) {
    const steps = workflow.steps || [];
    const byId = new Map(steps.map((st) => [st.jobId, st.step]));
    const before = new Map(steps.map((st) => [st.step, [...new Set([...(st.after || []),
      ...(st.waitsFor || []).map((id) => byId.get(id)).filter(Boolean)])]]));
    const column = new Map();
    const columnOf = (name, seen = new Set()) => {
      if (column.has(name)) return column.get(name);
      if (seen.has(name)) return 0;
      seen.add(name);
      const deps = (before.get(name) || []).filter((dep) => before.has(dep));
      const value = deps.length ? 1 + Math.max(...deps.map((dep) => columnOf(dep, seen))) : 0;
      column.set(name, value);
      return value;
    };
    steps.forEach((st) => columnOf(st.step));
    const rows = new Map();
    const place = new Map();
    for (const st of steps) {
      const c = column.get(st.step);
      const r = rows.get(c) || 0;
      rows.set(c, r + 1);
      place.set(st.step, { c, r });
    }
    const boxW = 170;
    const boxH = 50;
    const gapX = 60;
    const gapY = 18;
    const pad = 10;
    const columns = Math.max(1, ...[...column.values()].map((c) => c + 1));
    const maxRows = Math.max(1, ...rows.values());
    const width = pad * 2 + columns * boxW + (columns - 1) * gapX;
    const height = pad * 2 + maxRows * boxH + (maxRows - 1) * gapY;
    const at = (name) => {
      const p = place.get(name);
      return { x: pad + p.c * (boxW + gapX), y: pad + p.r * (boxH + gapY) };
    };
    const edges = [];
    for (const st of steps) {
      const to = at(st.step);
      for (const dep of before.get(st.step) || []) {
        if (!place.has(dep)) continue;
        const from = at(dep);
        const x1 = from.x + boxW;
        const y1 = from.y + boxH / 2;
        const x2 = to.x;
        const y2 = to.y + boxH / 2;
        edges.push(s('path', { class: 'edge', 'marker-end': 'url(#arrow)', d: `M${x1},${y1} C${x1 + gapX / 2},${y1} ${x2 - gapX / 2},${y2} ${x2},${y2}` }));
      }
    }
    const nodes = steps.map((st) => {
      const p = at(st.step);
      const took = stepMillis(st);
      return s('a', { href: `#/jobs/${st.jobId}`, 'data-step': st.step },
        s('g', { class: `node node-${String(st.state || 'unknown').toLowerCase()}` },
          s('title', null, `${st.step} (${st.task}): ${st.state}${took != null ? `, ${formatMillis(took)}` : ''}`),
          s('rect', { x: p.x, y: p.y, width: boxW, height: boxH, rx: 6 }),
          s('text', { x: p.x + 10, y: p.y + 20, class: 'node-name' }, st.step.length > 20 ? `${st.step.slice(0, 19)}…` : st.step),
          s('text', { x: p.x + 10, y: p.y + 38, class: 'node-detail' },
            `${st.state}${took != null ? ` · ${formatMillis(took)}` : ''}`)));
    });
    return s('svg', { class: 'graph', 'data-test': 'workflow-graph', viewBox: `0 0 ${width} ${height}`, width, height,
      role: 'img', 'aria-label': 'The workflow\'s steps' },
      s('defs', null, s('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 6, markerHeight: 6,
        orient: 'auto-start-reverse' }, s('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrow' }))),
      s('g', { 'data-key': 'edges' }, edges), s('g', { 'data-key': 'nodes' }, nodes));
  }

  function renderWorkflow(workflow) {
    const steps = workflow.steps || [];
    const rows = steps.map((st) => h('tr', { 'data-key': `step:${st.jobId}`, 'data-step': st.step },
      h('td', { class: 'name' }, st.step),
      h('td', { class: 'num id' }, h('a', { href: `#/jobs/${st.jobId}` }, st.jobId)),
      h('td', null, st.task),
      h('td', { 'data-field': 'state' }, badge(st.state)),
      h('td', null, (st.after || []).join(', ') || h('span', { class: 'muted' }, '—')),
      h('td', { class: 'num' }, num(st.attempt)),
      h('td', null, st.startedAt ? time(st.startedAt) : h('span', { class: 'muted' }, '—')),
      h('td', { class: 'num' }, formatMillis(stepMillis(st))),
      h('td', { class: 'error-cell' }, st.result != null ? h('span', { class: 'mono', title: st.result }, firstLine(st.result))
        : st.lastError && (st.state === 'FAILED' || st.state === 'CANCELLED')
          ? h('span', { title: firstLine(st.lastError) }, firstLine(st.lastError)) : h('span', { class: 'muted' }, '—'))));
    return h('div', { class: 'page', 'data-test': 'workflow-page' },
      h('div', { class: 'page-head' }, h('h1', null, `Workflow ${workflow.id}: ${workflow.name}`), badge(workflow.state),
        h('span', { class: 'spacer' }), h('a', { href: '#/workflows', class: 'btn btn-link' }, '← All workflows')),
      h('section', { class: 'card', 'data-key': 'counts' },
        h('p', { 'data-test': 'workflow-counts' }, `${num(workflow.jobs)} jobs: ${num(workflow.completed)} completed, `
          + `${num(workflow.failed)} failed, ${num(workflow.cancelled)} cancelled; a failed step's dependents `
          + `${workflow.onDependencyFailure === 'RUN' ? 'run' : 'are cancelled'}`)),
      h('section', { class: 'card', 'data-key': 'graph' }, h('h2', null, 'Steps'),
        h('div', { class: 'graph-box' }, workflowGraph(workflow))),
      h('section', { class: 'card', 'data-key': 'steps' },
        h('div', { class: 'table-wrap' }, h('table', { class: 'grid', 'data-test': 'step-table' },
          h('thead', null, h('tr', null, h('th', null, 'Step'), h('th', { class: 'num' }, 'Job'), h('th', null, 'Task'),
            h('th', null, 'State'), h('th', null, 'After'), h('th', { class: 'num' }, 'Attempt'), h('th', null, 'Started'),
            h('th', { class: 'num' }, 'Took'), h('th', null, 'Result or error'))),
          h('tbody', null, rows)))));
  }

  // ---------------------------------------------------------------- message queues

  function loadQueues(generation) {
    return loadPage(generation, 'queues', (page) => renderQueues(page.queues || []), () => OVERVIEW_REFRESH_MS);
  }


  const queueHref = (name) => `#/queues/${encodeURIComponent(name)}`;
  const held = (q) => q.visible + q.inFlight + q.delayed > 0;
  const rate = (perMinute) => (perMinute ? (perMinute < 10 ? perMinute.toFixed(1) : num(Math.round(perMinute))) : '0');

  function renderQueues(queues) {
    const rows = queues.map((q) => h('tr', { 'data-key': `queue:${q.name}`, 'data-queue': q.name },
      h('td', { class: 'name' }, h('a', { href: queueHref(q.name), 'data-test': 'queue-link' }, q.name)),
      h('td', null, q.fifo ? 'FIFO' : 'standard'),
      countCell('visible', q.visible),
      countCell('inFlight', q.inFlight),
      countCell('delayed', q.delayed),
      h('td', { class: 'num', 'data-field': 'oldest' }, held(q) ? formatDuration(q.oldestAgeSeconds) : '—'),
      h('td', { class: 'num', 'data-field': 'sent' }, rate(q.sentPerMinute)),
      h('td', { class: 'num', 'data-field': 'received' }, rate(q.receivedPerMinute)),
      h('td', null, q.deadLetterQueue ? h('a', { href: queueHref(q.deadLetterQueue) }, q.deadLetterQueue)
        : h('span', { class: 'muted' }, '—')),
      h('td', null, (q.deadLetterSources || []).length ? q.deadLetterSources.map((source, i) =>
        [i ? ', ' : '', h('a', { href: queueHref(source) }, source)]) : h('span', { class: 'muted' }, '—'))));
    return h('div', { class: 'page' },
      h('div', { class: 'page-head' }, h('h1', null, 'Message queues'),
        h('span', { class: 'muted small' }, 'the queues of the SQS-compatible API, counted every statistics interval')),
      h('section', { class: 'card' }, queues.length
        ? h('div', { class: 'table-wrap' }, h('table', { class: 'grid', 'data-test': 'queue-table' },
          h('thead', null, h('tr', null, h('th', null, 'Queue'), h('th', null, 'Type'), h('th', { class: 'num' }, 'Visible'),
            h('th', { class: 'num' }, 'In flight'), h('th', { class: 'num' }, 'Delayed'), h('th', { class: 'num' }, 'Oldest'),
            h('th', { class: 'num', title: 'per minute, last 5 minutes, every node' }, 'Sent / min'),
            h('th', { class: 'num', title: 'per minute, last 5 minutes, every node' }, 'Received / min'),
            h('th', null, 'Dead letters go to'), h('th', null, 'Dead letters of'))),
          h('tbody', null, rows)))
        : h('p', { class: 'empty', 'data-test': 'no-queues' }, 'No message queue exists.')));
  }

  function loadQueue(generation, name, params) {
    const span = ['1h', '24h', '7d'].includes(params.get('window')) ? params.get('window') : '24h';
    return loadPage(generation, `queues/${encodeURIComponent(name)}?${new URLSearchParams({ limit: 50, window: span })}`,
      renderQueue, () => OVERVIEW_REFRESH_MS);
  }

  // What was done with a message queue, per minute or hour: sent, received and deleted, one panel each.
  function renderQueueHistory(q) {
    const data = slotsOf(q.history, 144, ['sent', 'received', 'deleted']);
    const total = (key) => data.slots.reduce((sum, p) => sum + p[key], 0);
    const tabs = ['1h', '24h', '7d'].map((w) => h('a', { href: `${queueHref(q.name)}?window=${w}`, class: 'tab',
      'aria-current': w === q.history.window ? 'page' : null, 'data-test': `queue-window-${w}` }, w));
    const panel = (key) => ({ key, label: key, cls: `bar-${key}`, height: 60, ticks: 2 });
    return h('section', { class: 'card', 'data-key': 'queue-history' },
      h('div', { class: 'card-head' }, h('h2', null, 'Sent, received, deleted'),
        h('nav', { class: 'tabs', 'aria-label': 'Window' }, tabs),
        h('div', { class: 'legend', 'data-test': 'queue-history-totals' },
          `${num(total('sent'))} sent, ${num(total('received'))} received, ${num(total('deleted'))} deleted, per ${data.unit}`)),
      h('div', { class: 'chart-box' }, panelChart(data, chartWidth(), 'queue-history-chart',
        [panel('sent'), panel('received'), panel('deleted')],
        (p) => `${num(p.sent)} sent, ${num(p.received)} received, ${num(p.deleted)} deleted`,
        `Messages sent, received and deleted per ${data.unit}`)));
  }


  function renderQueue(q) {
    const field = (label, name, value) => [h('dt', null, label), h('dd', { 'data-field': name }, value)];
    const rows = (q.messages || []).map((m) => h('tr', { 'data-key': `message:${m.messageId}`, 'data-message': m.messageId },
      h('td', { class: 'mono' }, m.messageId.slice(0, 8)),
      h('td', { 'data-field': 'state' }, m.state),
      h('td', null, time(m.sentAt)),
      h('td', { class: 'num' }, num(m.receiveCount)),
      h('td', null, m.groupId || h('span', { class: 'muted' }, '—')),
      h('td', { class: 'error-cell' }, h('pre', { class: 'code', 'data-field': 'body' }, m.body)),
      h('td', null, m.attributes ? h('pre', { class: 'code' }, m.attributes) : h('span', { class: 'muted' }, '—'))));
    return h('div', { class: 'page', 'data-test': 'queue-page' },
      h('div', { class: 'page-head' }, h('h1', null, q.name), h('span', { class: 'spacer' }),
        h('a', { href: '#/queues', class: 'btn btn-link' }, '← All message queues')),
      h('section', { class: 'card' }, h('dl', { class: 'fields' },
        field('Type', 'type', q.fifo ? 'FIFO' : 'standard'),
        field('Visible', 'visible', num(q.visible)),
        field('In flight', 'inFlight', num(q.inFlight)),
        field('Delayed', 'delayed', num(q.delayed)),
        field('Oldest message', 'oldest', held(q) ? formatDuration(q.oldestAgeSeconds) : '—'),
        field('Visibility timeout', 'visibility', formatDuration(q.visibilityTimeoutSeconds)),
        field('Sent, received, deleted', 'rates', `${rate(q.sentPerMinute)}, ${rate(q.receivedPerMinute)}, `
          + `${rate(q.deletedPerMinute)} per minute (last 5 minutes)`),
        field('Dead letters go to', 'deadLetterQueue', q.deadLetterQueue
          ? [h('a', { href: queueHref(q.deadLetterQueue) }, q.deadLetterQueue), ` after ${q.maxReceiveCount} receives`] : '—'),
        field('Dead letters of', 'deadLetterSources', (q.deadLetterSources || []).join(', ') || '—'))),
      renderQueueHistory(q),
      canAct() && (q.deadLetterSources || []).length ? h('section', { class: 'card', 'data-key': 'redrive' },
        h('form', { class: 'bulk', 'data-test': 'redrive-form', autocomplete: 'off', 'data-queue': q.name, 'data-visible': q.visible },
          h('label', null, 'Move the visible messages back to',
            h('select', { name: 'to', 'data-test': 'redrive-to' }, q.deadLetterSources.map((source) => h('option', { value: source }, source)))),
          h('div', { class: 'filter-buttons' },
            h('button', { type: 'submit', class: 'btn btn-primary', 'data-test': 'redrive' }, 'Redrive…')))) : null,
      h('section', { class: 'card', 'data-key': 'messages' },
        h('h2', null, 'Oldest messages'),
        h('p', { class: 'muted small' }, 'Peeked, not received: no receipt handle, no change to their visibility or receive count.'),
        rows.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'grid', 'data-test': 'message-table' },
          h('thead', null, h('tr', null, h('th', null, 'Message'), h('th', null, 'State'), h('th', null, 'Sent'),
            h('th', { class: 'num' }, 'Receives'), h('th', null, 'Group'), h('th', null, 'Body'), h('th', null, 'Attributes'))),
          h('tbody', null, rows)))
          : h('p', { class: 'empty', 'data-test': 'no-messages' }, 'The queue is empty.')));
  }

  // ---------------------------------------------------------------- history

  function loadHistoryPage(generation, params) {
    const span = ['1h', '24h', '7d'].includes(params.get('window')) ? params.get('window') : '24h';
    const task = params.get('task') || '';
    return loadPage(generation, `history?${new URLSearchParams({ window: span, task })}`,
      (history) => renderHistoryPage(history, span, task), () => OVERVIEW_REFRESH_MS * 5);
  }


  function renderHistoryPage(history, span, task) {
    const data = slotsOf(history);
    const width = chartWidth();
    const total = (pick) => data.slots.reduce((sum, p) => sum + pick(p), 0);
    const tabs = ['1h', '24h', '7d'].map((w) => h('a', { href: `#/history?${new URLSearchParams({ window: w, task })}`,
      class: 'tab', 'aria-current': w === span ? 'page' : null, 'data-test': `window-${w}` }, w));
    const form = h('form', { class: 'filters', 'data-test': 'history-filter', autocomplete: 'off' },
      h('label', null, 'Task', h('select', { name: 'task', 'data-test': 'history-task' },
        h('option', { value: '', selected: !task }, 'every task'),
        (history.tasks || []).map((name) => h('option', { value: name, selected: name === task }, name)))));
    return h('div', { class: 'page', 'data-test': 'history-page' },
      h('div', { class: 'page-head' }, h('h1', null, 'History'), h('nav', { class: 'tabs', 'aria-label': 'Window' }, tabs),
        h('span', { class: 'muted small' }, `per ${data.unit}, kept by the queue: a day of minutes, a week of hours`)),
      h('section', { class: 'card' }, form),
      h('section', { class: 'card', 'data-key': 'throughput' },
        h('div', { class: 'card-head' }, h('h2', null, 'Throughput'),
          h('div', { class: 'legend', 'data-test': 'history-totals' },
            `${num(total((p) => p.completed))} completed, ${num(total((p) => p.failed))} failed, `
              + `${num(total((p) => p.retried))} retried`)),
        h('div', { class: 'chart-box' }, countChart(data, width, 'history-throughput'))),
      h('section', { class: 'card', 'data-key': 'wait' },
        h('div', { class: 'card-head' }, h('h2', null, 'Wait'),
          h('div', { class: 'legend muted' }, 'from due to start: average (bars), longest (line)')),
        h('div', { class: 'chart-box' }, timeChart(data, width, 'history-wait', 'waitAvgMs', 'waitMaxMs', 'wait'))),
      h('section', { class: 'card', 'data-key': 'run' },
        h('div', { class: 'card-head' }, h('h2', null, 'Run time'),
          h('div', { class: 'legend muted' }, 'average (bars), longest (line)')),
        h('div', { class: 'chart-box' }, timeChart(data, width, 'history-run', 'runAvgMs', 'runMaxMs', 'run time'))));
  }

  function renderNodes(nodes) {
    const rows = nodes.map((n) => {
      const age = (serverNow() - Date.parse(n.lastHeartbeat)) / 1000;
      const pools = Object.entries(n.pools || {}).map(([name, pool]) =>
        h('div', { class: 'pool' },
          h('strong', null, name), ` (${num(pool.capacity)})`,
          (pool.tasks || []).length ? `: ${pool.tasks.join(', ')}` : ''));
      return h('tr', { 'data-node': n.id, 'data-key': `node:${n.id}` },
        h('td', { class: 'name' }, n.id),
        h('td', null, n.host || '—'),
        h('td', null, time(n.startedAt)),
        h('td', { class: age > STALE_HEARTBEAT_SECONDS ? 'warn' : null, title: n.lastHeartbeat || '' }, formatRelative(n.lastHeartbeat)),
        h('td', null, pools.length ? pools : h('span', { class: 'muted' }, '—')));
    });
    if (!rows.length) rows.push(h('tr', { 'data-key': 'empty' }, h('td', { class: 'empty', colspan: 5 }, 'No nodes registered.')));
    return h('div', { class: 'table-wrap' },
      h('table', { class: 'grid', 'data-test': 'node-table' },
        h('thead', null, h('tr', null,
          h('th', null, 'Node'), h('th', null, 'Host'), h('th', null, 'Started'),
          h('th', null, 'Last heartbeat'), h('th', null, 'Pools (capacity): tasks'))),
        h('tbody', null, rows)));
  }

  function renderPools(pools) {
    const rows = pools.map((p) => h('tr', { 'data-pool': p.name, 'data-key': `pool:${p.name}` },
      h('td', { class: 'name' }, p.name),
      h('td', { class: 'num' }, num(p.capacity)),
      h('td', { class: 'num' },
        num(p.busy),
        h('meter', { class: 'meter', min: 0, max: p.capacity || 1, value: p.busy || 0,
          title: `${num(p.busy)} of ${num(p.capacity)} busy` })),
      countCell('hung', p.hung, null, 'bad'),
      h('td', { class: 'num' }, num(p.buffered))));
    if (!rows.length) rows.push(h('tr', { 'data-key': 'empty' }, h('td', { class: 'empty', colspan: 5 }, 'No pools on this node.')));
    return h('div', { class: 'table-wrap' },
      h('table', { class: 'grid', 'data-test': 'pool-table' },
        h('thead', null, h('tr', null,
          h('th', null, 'Pool'), h('th', { class: 'num' }, 'Capacity'), h('th', { class: 'num' }, 'Busy'),
          h('th', { class: 'num' }, 'Hung'), h('th', { class: 'num' }, 'Buffered'))),
        h('tbody', null, rows)));
  }

  function renderSchedules(schedules) {
    const rows = schedules.map((sc) => h('tr', { 'data-schedule': sc.name, 'data-key': `schedule:${sc.name}` },
      h('td', { class: 'name' }, sc.name),
      h('td', null, h('a', { href: jobsHash({ task: sc.task, state: 'COMPLETED' }) }, sc.task)),
      h('td', null, h('code', null, sc.cron)),
      h('td', null, sc.zone || '—'),
      h('td', null, time(sc.nextFire, true)),
      h('td', null, time(sc.lastFire, true)),
      h('td', null, badge(sc.lastJobState))));
    if (!rows.length) rows.push(h('tr', { 'data-key': 'empty' }, h('td', { class: 'empty', colspan: 7 }, 'No schedules.')));
    return h('div', { class: 'table-wrap' },
      h('table', { class: 'grid', 'data-test': 'schedule-table' },
        h('thead', null, h('tr', null,
          h('th', null, 'Schedule'), h('th', null, 'Task'), h('th', null, 'Cron'), h('th', null, 'Zone'),
          h('th', null, 'Next fire'), h('th', null, 'Last fire'), h('th', null, 'Last job'))),
        h('tbody', null, rows)));
  }

  // ---------------------------------------------------------------- jobs

  function readFilters(params) {
    const state = (params.get('state') || '').toUpperCase();
    return {
      state: GROUPS.includes(state) ? state : DEFAULT_GROUP,
      task: params.get('task') || '',
      from: params.get('from') || '',
      to: params.get('to') || '',
      dedupKey: params.get('dedupKey') || '',
      error: params.get('error') || '',
      match: params.getAll('match').filter(Boolean),
      tag: params.get('tag') || '',
      after: params.get('after') || '',
    };
  }

  function filterQuery(filters) {
    return {
      state: filters.state, task: filters.task, from: filters.from, to: filters.to,
      dedupKey: filters.dedupKey, error: filters.error, match: filters.match, tag: filters.tag,
    };
  }

  // The API's query for a set of filters; `match` repeats.
  function searchParams(filters, extra) {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries({ ...filterQuery(filters), ...extra })) {
      if (Array.isArray(value)) value.forEach((v) => query.append(name, v));
      else if (value) query.set(name, value);
    }
    return query;
  }

  function toLocalInput(iso) {
    const d = new Date(iso);
    if (!iso || Number.isNaN(d.getTime())) return '';
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T`
      + `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  function toInstant(local, label) {
    if (!local) return '';
    const d = new Date(local);
    if (Number.isNaN(d.getTime())) throw new Error(`${label} is not a valid date and time.`);
    return d.toISOString().replace('.000Z', 'Z');
  }

  async function loadJobs(generation, params) {
    const filters = readFilters(params);
    const query = searchParams(filters, { after: filters.after, limit: String(PAGE_SIZE) });
    const [page, overview] = await Promise.all([
      api(`jobs?${query}`).catch((e) => e),
      api('overview').catch(() => null),
    ]);
    if (generation !== app.generation) return;
    if (overview) useOverview(overview);
    if (page instanceof Error) setLoadError(page);
    else setLoadError(null);
    paint(renderJobs(filters, page instanceof Error ? null : page));
  }

  function renderJobs(filters, page) {
    const group = (page && page.state) || filters.state;
    const taskNames = new Set(((app.overview && app.overview.tasks) || []).map((t) => t.name));
    if (filters.task) taskNames.add(filters.task);
    const stateTabs = GROUPS.map((g) =>
      h('a', { href: jobsHash({ ...filterQuery(filters), state: g }), class: 'tab', 'aria-current': g === filters.state ? 'page' : null },
        badge(g)));
    const form = h('form', { class: 'filters', 'data-test': 'job-filter', novalidate: true, autocomplete: 'off' },
      h('label', null, 'State',
        h('select', { name: 'state' }, GROUPS.map((g) => h('option', { value: g, selected: g === filters.state }, g)))),
      h('label', null, 'Task',
        h('select', { name: 'task' },
          h('option', { value: '', selected: !filters.task }, 'any task'),
          [...taskNames].sort().map((name) => h('option', { value: name, selected: name === filters.task }, name)))),
      h('label', null, 'From', h('input', { type: 'datetime-local', name: 'from', step: 1, value: toLocalInput(filters.from) })),
      h('label', null, 'To', h('input', { type: 'datetime-local', name: 'to', step: 1, value: toLocalInput(filters.to) })),
      h('label', null, 'Dedup key', h('input', { type: 'text', name: 'dedupKey', value: filters.dedupKey, spellcheck: 'false' })),
      h('label', null, 'Error contains', h('input', { type: 'search', name: 'error', maxlength: 200, value: filters.error,
        disabled: !seesJobData(), title: seesJobData() ? null : 'Job data needs the admin role' })),
      h('label', null, 'Tags', h('input', { type: 'text', name: 'tag', value: filters.tag, spellcheck: 'false',
        placeholder: 'vip, eu', title: 'Jobs with all of these tags' })),
      h('label', { class: 'wide' }, 'Payload, headers or result',
        h('textarea', { name: 'match', rows: 1, spellcheck: 'false', 'data-test': 'filter-match', disabled: !seesJobData(),
          placeholder: 'payload.customer.id=42', title: 'One per line: payload.<path>=<value>, headers.<name>=<value> or result.<path>=<value>' },
        filters.match.join('\n'))),
      h('div', { class: 'filter-buttons' },
        h('button', { type: 'submit', class: 'btn btn-primary', 'data-test': 'filter-apply' }, 'Apply'),
        h('a', { class: 'btn btn-link', href: jobsHash({ state: filters.state }) }, 'Clear')));

    return h('div', { class: 'page' },
      h('div', { class: 'page-head' }, h('h1', null, 'Jobs'), h('nav', { class: 'tabs', 'aria-label': 'Job states' }, stateTabs)),
      h('section', { class: 'card' }, form),
      page && canAct() && (BULK_ACTIONS[group] || []).length ? renderBulkBar(group) : null,
      page ? renderJobTable(filters, page, group) : null);
  }

  /** The bulk actions of a group: on the ticked jobs, or on every job the filters match. */
  function renderBulkBar(group) {
    const actions = BULK_ACTIONS[group];
    const chosen = app.bulkChoice && actions.includes(app.bulkChoice) ? app.bulkChoice : actions[0];
    const count = app.selected.size;
    return h('section', { class: 'card bulk-bar', 'data-test': 'bulk-bar', 'data-key': 'bulk' },
      h('form', { class: 'bulk', 'data-test': 'bulk-form', novalidate: true, autocomplete: 'off' },
        h('label', null, 'Action',
          h('select', { name: 'action', 'data-test': 'bulk-action' },
            actions.map((a) => h('option', { value: a, selected: a === chosen }, BULK_LABELS[a])))),
        chosen === 'run-at' ? h('label', null, 'At', h('input', { type: 'datetime-local', name: 'at', step: 1, required: true })) : null,
        chosen === 'priority' ? h('label', null, 'Priority', h('input', { type: 'number', name: 'priority', step: 1, required: true,
          'data-test': 'bulk-priority' })) : null,
        h('div', { class: 'filter-buttons' },
          h('button', { type: 'submit', value: 'selected', class: 'btn', disabled: count === 0, 'data-test': 'bulk-selected' },
            `Apply to ${num(count)} selected`),
          h('button', { type: 'submit', value: 'all', class: 'btn btn-primary', 'data-test': 'bulk-all' },
            'Apply to every matching job…'))));
  }

  function renderJobTable(filters, page, group) {
    const jobs = page.jobs || [];
    const finished = FINISHED.has(group);
    const running = group === 'RUNNING';
    const timeLabel = finished ? 'Finished' : running ? 'Started' : 'Scheduled';
    const selectable = canAct() && (BULK_ACTIONS[group] || []).length > 0;
    const rows = jobs.map((job) => h('tr', { 'data-job-id': job.id, 'data-key': `job:${job.id}` },
      selectable ? h('td', { class: 'pick' }, h('input', { type: 'checkbox', 'data-select': job.id, 'aria-label': `Select job ${job.id}`,
        checked: app.selected.has(String(job.id)) })) : null,
      h('td', { class: 'num id' }, h('a', { href: `#/jobs/${job.id}`, 'data-test': 'job-link' }, job.id)),
      h('td', { class: 'name' }, h('a', { href: jobsHash({ ...filterQuery(filters), task: job.task }) }, job.task)),
      h('td', { 'data-field': 'state' }, badge(job.state)),
      h('td', { class: 'num', 'data-field': 'attempt' }, `${num(job.attempt)} / ${num(job.maxAttempts)}`),
      h('td', null, time(job.createdAt)),
      h('td', null, time(finished ? job.finishedAt : running ? job.startedAt : job.scheduleTime)),
      running ? h('td', null, job.leaseOwner || '—') : null,
      h('td', null, job.dedupKey ? h('span', { class: 'mono' }, job.dedupKey) : h('span', { class: 'muted' }, '—')),
      h('td', { 'data-field': 'tags' }, (job.tags || []).length ? (job.tags || []).map((tag) => h('span', { class: 'tag' }, tag))
        : h('span', { class: 'muted' }, '—')),
      h('td', { class: 'error-cell', 'data-field': 'error' },
        job.error ? h('span', { title: firstLine(job.error) }, firstLine(job.error)) : h('span', { class: 'muted' }, '—'))));
    const filtered = filters.task || filters.from || filters.to || filters.dedupKey || filters.error || filters.tag
      || filters.match.length;
    const first = filters.after ? h('a', { class: 'btn btn-sm', href: jobsHash(filterQuery(filters)), 'data-test': 'first-page' }, 'First page') : null;
    const next = page.next
      ? h('a', { class: 'btn btn-sm', href: jobsHash({ ...filterQuery(filters), after: page.next }), 'data-test': 'next-page' }, 'Next page')
      : null;
    return h('section', { class: 'card' },
      jobs.length
        ? h('div', { class: 'table-wrap' },
          h('table', { class: 'grid', 'data-test': 'job-table' },
            h('thead', null, h('tr', null,
              selectable ? h('th', { class: 'pick' }, h('input', { type: 'checkbox', 'data-select': 'page', 'aria-label': 'Select the page',
                checked: jobs.length > 0 && jobs.every((job) => app.selected.has(String(job.id))) })) : null,
              h('th', { class: 'num' }, 'ID'), h('th', null, 'Task'), h('th', null, 'State'),
              h('th', { class: 'num' }, 'Attempt'), h('th', null, 'Created'), h('th', null, timeLabel),
              running ? h('th', null, 'Node') : null,
              h('th', null, 'Dedup key'), h('th', null, 'Tags'), h('th', null, 'Error'))),
            h('tbody', null, rows)))
        : h('p', { class: 'empty', 'data-test': 'no-jobs' },
          filters.after ? `No more ${group} jobs.` : `No ${group} jobs${filtered ? ' match these filters' : ''}.`),
      h('div', { class: 'pager' },
        h('span', { class: 'muted' },
          `${num(jobs.length)} ${jobs.length === 1 ? 'job' : 'jobs'} on this page, `
            + (finished ? 'newest first' : 'oldest first')),
        h('span', { class: 'spacer' }),
        first, next));
  }

  function applyFilters(form) {
    const data = new FormData(form);
    let from;
    let to;
    try {
      from = toInstant(data.get('from'), 'From');
      to = toInstant(data.get('to'), 'To');
      if (from && to && Date.parse(from) >= Date.parse(to)) throw new Error('From must be before To.');
    } catch (e) {
      app.actionError = e.message;
      renderNotices();
      return;
    }
    const hash = jobsHash({
      state: data.get('state'), task: data.get('task'), from, to,
      dedupKey: String(data.get('dedupKey') || '').trim(), error: String(data.get('error') || '').trim(),
      tag: String(data.get('tag') || '').trim(),
      match: String(data.get('match') || '').split('\n').map((line) => line.trim()).filter(Boolean),
    });
    if (hash === location.hash) {
      app.actionError = null;
      renderNotices();
      reload();
    } else {
      location.hash = hash;
    }
  }

  // ---------------------------------------------------------------- pages that load one answer

  // Loads a page's answer (and the overview once, for the header), paints it, and loads it again
  // after refresh(answer) ms while that gives a number, or after RETRY_MS when it failed (but for a 404).
  async function loadPage(generation, path, render, refresh) {
    const again = () => loadPage(generation, path, render, refresh);
    try {
      const [data] = await Promise.all([
        api(path),
        app.overview ? null : api('overview').then(useOverview, () => null),
      ]);
      if (generation !== app.generation) return;
      setLoadError(null);
      paint(render(data));
      const ms = refresh(data);
      if (ms) later(generation, ms, again);
    } catch (e) {
      if (generation !== app.generation) return;
      setLoadError(e);
      if (e.status !== 404) later(generation, RETRY_MS, again);
    }
  }

  // ---------------------------------------------------------------- bulk actions and the audit trail

  async function runBulk(form, scope) {
    const route = parseRoute();
    if (!route || route.page !== 'jobs' || app.busy) return;
    const filters = readFilters(route.params);
    const data = new FormData(form);
    const action = String(data.get('action'));
    const extra = { action };
    try {
      if (action === 'run-at') {
        extra.at = toInstant(data.get('at'), 'At');
        if (!extra.at) throw new Error('Give the time the jobs should run at.');
      }
      if (action === 'priority') {
        extra.priority = String(data.get('priority') || '').trim();
        if (!/^-?\d+$/.test(extra.priority)) throw new Error('Give the priority to set, a whole number.');
      }
    } catch (e) {
      app.actionError = e.message;
      renderNotices();
      return;
    }
    if (scope === 'selected') extra.ids = [...app.selected].join(',');
    app.busy = true;
    try {
      app.message = null;
      app.actionError = null;
      renderNotices();
      const counted = await api(`jobs/count?${searchParams(filters, { ids: extra.ids })}`);
      const what = { cancel: 'Cancel', 'run-now': 'Make due now', 'run-at': `Make due at ${formatTime(extra.at)}`,
        priority: `Set priority ${extra.priority} on`, delete: 'Delete', rerun: 'Re-run' }[action];
      if (counted.count === 0) {
        app.message = `No ${counted.state} jobs match: nothing to do.`;
        renderNotices();
        return;
      }
      const question = `${what} ${num(counted.count)} ${counted.state} ${counted.count === 1 ? 'job' : 'jobs'}`
        + ` (${counted.filter})? It runs on the server in batches of up to 500 jobs; a job that changed meanwhile`
        + ' (claimed, finished) is skipped.';
      if (!await confirmDialog(question)) return;
      const started = await post(`bulk?${searchParams(filters, extra)}`);
      location.hash = `#/actions/${started.id}`;
    } catch (e) {
      app.actionError = e.message;
      renderNotices();
    } finally {
      app.busy = false;
    }
  }

  function loadActions(generation, params) {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (params.get('before')) query.set('before', params.get('before'));
    return loadPage(generation, `actions?${query}`, (page) => renderActions(page.actions || [], params.get('before')),
      () => OVERVIEW_REFRESH_MS);
  }


  function progress(action) {
    const total = action.matched || 0;
    const done = action.acted + action.skipped;
    const share = total > 0 ? Math.min(100, Math.round((done * 100) / total)) : 100;
    return h('div', { class: 'progress', title: `${share}%` },
      h('div', { class: `progress-bar${action.state === 'RUNNING' ? '' : ' done'}`, style: `width: ${share}%` }));
  }

  function actionRow(action) {
    return h('tr', { 'data-key': `action:${action.id}`, 'data-action-id': action.id },
      h('td', { class: 'num id' }, h('a', { href: `#/actions/${action.id}` }, action.id)),
      h('td', null, time(action.startedAt, true)),
      h('td', null, action.actor || h('span', { class: 'muted' }, '—')),
      h('td', null, action.action),
      h('td', null, action.target),
      h('td', null, badge(action.state)),
      h('td', { class: 'num' }, action.matched == null ? '—' : num(action.matched)),
      h('td', { class: 'num', 'data-field': 'acted' }, num(action.acted)),
      h('td', { class: 'num' }, num(action.skipped)),
      h('td', null, action.state === 'RUNNING' ? progress(action) : action.message || ''));
  }

  function renderActions(actions, before) {
    const older = actions.length === PAGE_SIZE ? actions[actions.length - 1].id : null;
    return h('div', { class: 'page' },
      h('div', { class: 'page-head' }, h('h1', null, 'Actions'),
        h('span', { class: 'muted small' }, 'What operators did, on every node, newest first')),
      h('section', { class: 'card' },
        actions.length
          ? h('div', { class: 'table-wrap' },
            h('table', { class: 'grid', 'data-test': 'action-table' },
              h('thead', null, h('tr', null,
                h('th', { class: 'num' }, 'ID'), h('th', null, 'When'), h('th', null, 'Who'), h('th', null, 'Action'),
                h('th', null, 'On'), h('th', null, 'State'), h('th', { class: 'num' }, 'Matched'),
                h('th', { class: 'num' }, 'Changed'), h('th', { class: 'num' }, 'Skipped'), h('th', null, 'Result'))),
              h('tbody', null, actions.map(actionRow))))
          : h('p', { class: 'empty', 'data-test': 'no-actions' }, 'No action has been taken yet.'),
        h('div', { class: 'pager' },
          h('span', { class: 'spacer' }),
          before ? h('a', { class: 'btn btn-sm', href: '#/actions' }, 'Newest') : null,
          older ? h('a', { class: 'btn btn-sm', href: `#/actions?before=${older}` }, 'Older') : null)));
  }

  function loadAction(generation, id) {
    return loadPage(generation, `actions/${id}`, renderAction,
      (action) => (action.state === 'RUNNING' ? ACTION_REFRESH_MS : null));
  }


  function renderAction(action) {
    const field = (label, name, value) => [h('dt', null, label), h('dd', { 'data-field': name }, value)];
    const done = action.acted + action.skipped;
    return h('div', { class: 'page', 'data-test': 'action-page' },
      h('div', { class: 'page-head' },
        h('h1', null, `Action ${action.id}`), badge(action.state),
        h('span', { class: 'spacer' }),
        h('a', { href: app.lastJobsHash || '#/jobs', class: 'btn btn-link' }, '← Back to jobs')),
      h('section', { class: 'card', 'data-key': 'progress' },
        h('h2', null, action.state === 'RUNNING' ? 'In progress' : 'Done'),
        progress(action),
        h('p', { 'data-test': 'action-progress' },
          `${num(done)} of ${num(action.matched || 0)} matching jobs handled: ${num(action.acted)} changed, `
            + `${num(action.skipped)} skipped`)),
      h('section', { class: 'card' },
        h('dl', { class: 'fields' },
          field('Action', 'action', action.action),
          field('On', 'target', action.target),
          field('By', 'actor', action.actor || '—'),
          field('Node', 'node', action.node || '—'),
          field('Started', 'startedAt', time(action.startedAt, true)),
          field('Finished', 'finishedAt', action.finishedAt ? time(action.finishedAt, true) : '—'),
          field('Result', 'message', action.message || '—'))));
  }

  // ---------------------------------------------------------------- job detail

  async function loadDetail(generation, id) {
    try {
      const [job] = await Promise.all([
        api(`jobs/${id}`),
        app.overview ? null : api('overview').then(useOverview, () => null),
      ]);
      if (generation !== app.generation) return;
      setLoadError(null);
      paint(renderDetail(job));
      if (ACTIVE.has(job.state)) later(generation, DETAIL_REFRESH_MS, () => loadDetail(generation, id));
    } catch (e) {
      if (generation !== app.generation) return;
      setLoadError(e);
      if (e.status === 404) {
        paint(h('div', { class: 'page' },
          h('div', { class: 'page-head' }, h('h1', null, `Job ${id}`)),
          h('p', { class: 'empty', 'data-test': 'job-not-found' }, 'No job has this id, or retention removed it.'),
          h('p', null, h('a', { href: app.lastJobsHash || '#/jobs', 'data-test': 'back-to-jobs' }, '← Back to jobs'))));
      } else {
        later(generation, RETRY_MS, () => loadDetail(generation, id));
      }
    }
  }

  function renderDetail(job) {
    const state = job.state;
    const active = ACTIVE.has(state);
    const actions = canAct();
    const group = state === 'STARTING' ? 'RUNNING' : state;
    const back = app.lastJobsHash || jobsHash({ task: job.task, state: GROUPS.includes(group) ? group : DEFAULT_GROUP });
    const yesNo = (v) => (v ? 'yes' : 'no');
    const field = (label, name, value) => [h('dt', null, label), h('dd', { 'data-field': name }, value)];
    const block = (title, name, text, extraClass) => h('section', { class: 'card', 'data-key': `block:${name}` },
      h('h2', null, title),
      h('pre', { class: `code${extraClass ? ` ${extraClass}` : ''}`, 'data-field': name }, text));

    return h('div', { class: 'page', 'data-test': 'job-detail' },
      h('div', { class: 'page-head' },
        h('a', { href: back, class: 'back', 'data-test': 'back-to-jobs' }, '← Back to jobs'),
        h('h1', null, `Job ${job.id}`),
        badge(state),
        h('span', { class: 'muted' }, job.task),
        active ? h('span', { class: 'live', title: 'Refreshes every second' }, 'live') : null,
        h('span', { class: 'spacer' }),
        actions && state === 'FAILED'
          ? h('button', { type: 'button', class: 'btn', 'data-action': 'rerun', 'data-job': job.id, 'data-task': job.task }, 'Re-run')
          : null,
        actions && active
          ? h('button', { type: 'button', class: 'btn btn-danger', 'data-action': 'cancel', 'data-job': job.id, 'data-task': job.task }, 'Cancel')
          : null),
      h('section', { class: 'card', 'data-key': 'fields' },
        h('dl', { class: 'fields' },
          field('ID', 'id', String(job.id)),
          field('Task', 'task', h('a', { href: jobsHash({ task: job.task, state: GROUPS.includes(group) ? group : DEFAULT_GROUP }) }, job.task)),
          field('State', 'state', badge(state)),
          field('Attempt', 'attempt', `${num(job.attempt)} / ${num(job.maxAttempts)}`),
          field('Priority', 'priority', num(job.priority)),
          field('Partition', 'partition', num(job.partition)),
          field('Dedup key', 'dedupKey', job.dedupKey ? h('span', { class: 'mono' }, job.dedupKey) : '—'),
          field('Tags', 'tags', (job.tags || []).length ? job.tags.map((tag) => h('span', { class: 'tag' }, tag)) : '—'),
          field('Workflow', 'workflow', job.workflow != null ? h('a', { href: `#/workflows/${job.workflow}` }, String(job.workflow)) : '—'),
          field('Created', 'createdAt', time(job.createdAt, true)),
          field('Scheduled', 'scheduleTime', time(job.scheduleTime, true)),
          field('Started', 'startedAt', time(job.startedAt, true)),
          field('Finished', 'finishedAt', time(job.finishedAt, true)),
          field('Lease owner', 'leaseOwner', job.leaseOwner || '—'),
          field('Lease deadline', 'leaseDeadline', time(job.leaseDeadline, true)),
          field('Re-run requested', 'rerunRequested', yesNo(job.rerunRequested)),
          field('Cancel requested', 'cancelRequested', yesNo(job.cancelRequested)),
          field('Delay tolerance deadline', 'delayToleranceDeadline', time(job.delayToleranceDeadline, true)))),
      job.lastError ? block('Last error', 'lastError', job.lastError, 'code-error') : null,
      job.steps && job.steps.length ? renderSteps(job.steps) : null,
      job.attempts && job.attempts.length ? renderAttempts(job.attempts) : null,
      job.result != null ? block('Result', 'result', prettyJson(job.result)) : null,
      block('Payload', 'payload', prettyJson(job.payload)),
      job.headers != null ? block('Headers', 'headers', prettyJson(job.headers)) : null,
      job.progress != null ? block('Progress', 'progress', prettyJson(job.progress)) : null);
  }

  /**
   * A durable handler's steps in their order: each step's value and timing, a sleep's end, and how a
   * signal wait stands (what the job waits for).
   */
  function renderSteps(steps) {
    const rows = steps.map((s, i) => {
      const millis = s.startedAt && s.finishedAt ? Date.parse(s.finishedAt) - Date.parse(s.startedAt) : null;
      const waits = s.kind === 'SLEEP' ? `until ${formatTime(s.wakeAt)}`
        : s.kind === 'SIGNAL' ? (s.signal === 'WAITING' ? `waiting until ${formatTime(s.wakeAt)}` : s.signal) : '—';
      return h('tr', { 'data-step': s.name, 'data-key': `step:${i}` },
        h('td', { class: 'num' }, s.seq < 0 ? '—' : num(s.seq)),
        h('td', { class: 'mono' }, s.name),
        h('td', null, badge(s.kind)),
        h('td', null, waits),
        h('td', { class: 'num' }, num(s.attempt)),
        h('td', null, time(s.finishedAt)),
        h('td', { class: 'num' }, millis == null || s.kind !== 'STEP' ? '—' : `${num(millis)} ms`),
        h('td', null, s.result != null ? h('pre', { class: 'code', 'data-field': 'step-result' }, prettyJson(s.result)) : '—'));
    });
    return h('section', { class: 'card', 'data-key': 'block:steps' },
      h('h2', null, 'Steps'),
      h('div', { class: 'table-wrap' },
        h('table', { class: 'grid', 'data-test': 'step-table' },
          h('thead', null, h('tr', null,
            h('th', { class: 'num' }, 'Place'), h('th', null, 'Step'), h('th', null, 'Kind'), h('th', null, 'Waits'),
            h('th', { class: 'num' }, 'Attempt'), h('th', null, 'Recorded'), h('th', { class: 'num' }, 'Took'),
            h('th', null, 'Value'))),
          h('tbody', null, rows))));
  }

  /** A job's attempt history, when its task keeps one: newest first, each with its error and log. */
  function renderAttempts(attempts) {
    const rows = attempts.map((a, i) => {
      const lines = (a.log || []).map((line) => `${formatTime(line.at)} ${line.level} ${line.message}`);
      if (a.droppedLogLines) lines.push(`… ${num(a.droppedLogLines)} more lines not kept`);
      const millis = a.startedAt && a.endedAt ? Date.parse(a.endedAt) - Date.parse(a.startedAt) : null;
      return h('tr', { 'data-attempt': String(i + 1), 'data-key': `attempt:${i}` },
        h('td', { class: 'num' }, num(a.attempt)),
        h('td', null, badge(a.outcome)),
        h('td', null, a.node || '—'),
        h('td', null, time(a.startedAt)),
        h('td', { class: 'num' }, millis == null ? '—' : `${num(millis)} ms`),
        h('td', null, a.error ? h('pre', { class: 'code code-error', title: a.error }, firstLine(a.error)) : '—'),
        h('td', null, lines.length ? h('pre', { class: 'code', 'data-field': 'log' }, lines.join('\n')) : '—'));
    }).reverse();
    return h('section', { class: 'card', 'data-key': 'block:attempts' },
      h('h2', null, 'Attempts'),
      h('div', { class: 'table-wrap' },
        h('table', { class: 'grid', 'data-test': 'attempt-table' },
          h('thead', null, h('tr', null,
            h('th', { class: 'num' }, 'Attempt'), h('th', null, 'Outcome'), h('th', null, 'Node'), h('th', null, 'Started'),
            h('th', { class: 'num' }, 'Took'), h('th', null, 'Error'), h('th', null, 'Log'))),
          h('tbody', null, rows))));
  }

  // ---------------------------------------------------------------- wiring

  document.addEventListener('click', (event) => {
    const dismiss = event.target.closest('[data-dismiss]');
    if (dismiss) {
      if (dismiss.dataset.dismiss === 'message') app.message = null;
      else {
        app.actionError = null;
        app.loadError = null;
      }
      renderNotices();
      return;
    }
    const button = event.target.closest('button[data-action]');
    if (button && !button.disabled) {
      event.preventDefault();
      runAction({ ...button.dataset });
    }
  });

  document.addEventListener('submit', (event) => {
    const redrive = event.target.closest('form[data-test="redrive-form"]');
    if (redrive) {
      event.preventDefault();
      runAction({ action: 'redrive', queue: redrive.dataset.queue, to: new FormData(redrive).get('to'),
        visible: redrive.dataset.visible });
      return;
    }
    const bulk = event.target.closest('form[data-test="bulk-form"]');
    if (bulk) {
      event.preventDefault();
      runBulk(bulk, event.submitter ? event.submitter.value : 'all');
      return;
    }
    const form = event.target.closest('form[data-test="job-filter"]');
    if (!form) return;
    event.preventDefault();
    applyFilters(form);
  });

  document.addEventListener('change', (event) => {
    const historyTask = event.target.closest('select[data-test="history-task"]');
    if (historyTask) {
      const route = parseRoute();
      const span = route && route.params ? route.params.get('window') || '24h' : '24h';
      location.hash = `#/history?${new URLSearchParams({ window: span, task: historyTask.value })}`;
      return;
    }
    const box = event.target.closest('input[data-select]');
    const choice = event.target.closest('select[data-test="bulk-action"]');
    if (!box && !choice) return;
    if (choice) app.bulkChoice = choice.value;
    if (box && box.dataset.select === 'page') {
      for (const row of view.querySelectorAll('input[data-select]:not([data-select="page"])')) {
        if (box.checked) app.selected.add(row.dataset.select);
        else app.selected.delete(row.dataset.select);
      }
    } else if (box) {
      if (box.checked) app.selected.add(box.dataset.select);
      else app.selected.delete(box.dataset.select);
    }
    reload();
  });

  document.addEventListener('visibilitychange', () => {
    if (!document.hidden && app.timer) reload();
  });

  let resizeTimer = null;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      const route = parseRoute();
      if (route && route.page === 'overview' && app.overview && view.querySelector('.chart-box')) {
        paint(renderOverview(app.overview));
      }
    }, 150);
  });

  window.addEventListener('hashchange', navigate);

  if (!location.hash || location.hash === '#' || location.hash === '#/') location.replace('#/overview');
  else navigate();
})();
