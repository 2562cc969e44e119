/*
 * app.js - lumen's web GUI. One page, no framework: the selection lives in
 * the URL (#w=f0&base=f1&k=gemm&norm=per_kernel...), the server answers
 * /api/analysis with the same JSON as `lumen analyze --format json`, and
 * every panel is drawn from it as tables, with charts where they help
 * (speed-of-light, instruction mix, per-channel L2, the memory chart and
 * the roofline), and a multi-rank workload's rank table (ranks.js).
 */
'use strict';

const $ = (id) => document.getElementById(id);
const KEYS = ['w', 'base', 'k', 'kn', 'd', 'g', 'rank', 'r', 'norm', 'weight'];
const MULTI = new Set(['kn']);
const charts = [];
let infoCache = {};
let lastReport = null;

/* ------------------------------------------------------------ selection */

function readHash() {
  const s = {};
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  for (const key of KEYS) {
    const all = params.getAll(key).filter((v) => v !== '');
    if (all.length) s[key] = MULTI.has(key) ? all : all[0];
  }
  return s;
}

function query(s, withBase = true) {
  const p = new URLSearchParams();
  for (const key of KEYS) {
    if (key === 'base' && !withBase) continue;
    const v = s[key];
    if (v === undefined || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => p.append(key, x));
    else p.append(key, v);
  }
  return p.toString();
}

function selectionFromForm() {
  const s = { w: $('workload').value };
  if ($('baseline').value) s.base = $('baseline').value;
  if ($('kregex').value.trim()) s.k = $('kregex').value.trim();
  const kn = Array.from($('klist').selectedOptions).map((o) => o.value);
  if (kn.length) s.kn = kn;
  if ($('dispatch').value.trim()) s.d = $('dispatch').value.trim();
  if ($('gpu').value.trim()) s.g = $('gpu').value.trim();
  if ($('rank').value.trim()) s.rank = $('rank').value.trim();
  if ($('region').value) s.r = $('region').value;
  if ($('norm').value) s.norm = $('norm').value;
  if ($('weight').value && $('weight').value !== 'count') s.weight = $('weight').value;
  return s;
}

function setStatus(text, error = false) {
  $('status').textContent = text;
  $('status').className = error ? 'error' : '';
}

async function getJSON(url) {
  const r = await fetch(url, { credentials: 'same-origin' });
  let body = null;
  try {
    body = await r.json();
  } catch (e) {
    throw new Error(`${r.status} ${r.statusText}`);
  }
  if (!r.ok) throw new Error(body && body.error ? body.error : `${r.status}`);
  return body;
}

/* --------------------------------------------------------------- setup */

// ", 1,024 ranks on 4 hosts" for a stored workload of rank parts, else "".
function rankNote(w) {
  if (!w.ranks) return '';
  const n = (x, one) => `${x.toLocaleString('en-US')} ${one}${x === 1 ? '' : 's'}`;
  return `, ${n(w.ranks, 'rank')} on ${n(w.hosts, 'host')}`;
}

async function init() {
  let list;
  try {
    list = await getJSON('api/workloads');
  } catch (e) {
    setStatus(`cannot list workloads: ${e.message}`, true);
    return;
  }
  for (const sel of [$('workload'), $('baseline')]) {
    for (const w of list.workloads) {
      const o = document.createElement('option');
      o.value = w.id;
      o.textContent = w.kind === 'store' ? `${w.name} (store${w.team ? ', ' + w.team : ''}${rankNote(w)})` : w.name;
      sel.appendChild(o);
    }
  }
  if (list.store_error) setStatus(`store: ${list.store_error}`, true);
  $('filters').addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = query(selectionFromForm());
  });
  $('reset').addEventListener('click', () => {
    location.hash = query({ w: $('workload').value });
  });
  for (const id of ['workload', 'baseline', 'norm', 'weight', 'region', 'klist']) {
    $(id).addEventListener('change', () => {
      const s = selectionFromForm();
      if (id === 'workload') { delete s.kn; delete s.r; }
      location.hash = query(s);
    });
  }
  window.addEventListener('hashchange', show);
  if (!location.hash && list.workloads.length) location.hash = query({ w: list.workloads[0].id });
  else show();
}

async function info(id) {
  if (!infoCache[id]) infoCache[id] = await getJSON(`api/info?w=${encodeURIComponent(id)}`);
  return infoCache[id];
}

function fillForm(s, inf) {
  $('workload').value = s.w;
  $('baseline').value = s.base || '';
  $('kregex').value = s.k || '';
  $('dispatch').value = s.d || '';
  $('gpu').value = s.g || '';
  $('rank').value = s.rank || '';
  const norm = $('norm');
  norm.innerHTML = '';
  for (const n of inf.norms) {
    const o = document.createElement('option');
    o.value = n;
    o.textContent = n;
    norm.appendChild(o);
  }
  norm.value = s.norm || inf.norms[0] || '';
  const kl = $('klist');
  kl.innerHTML = '';
  for (const k of inf.kernels) {
    const o = document.createElement('option');
    o.value = k.name;
    o.textContent = `${k.name} (${k.count})`;
    o.title = k.name;
    o.selected = (s.kn || []).includes(k.name);
    kl.appendChild(o);
  }
  const reg = $('region');
  reg.innerHTML = '<option value="">all</option>';
  for (const r of inf.regions) {
    const o = document.createElement('option');
    o.value = r;
    o.textContent = r;
    reg.appendChild(o);
  }
  reg.value = s.r || '';
  reg.disabled = inf.regions.length === 0;
  $('weight').value = s.weight || 'count';
  $('share').href = location.href;
}

/* -------------------------------------------------------------- render */

async function show() {
  const s = readHash();
  if (!s.w) return;
  setStatus('loading…');
  $('filter-error').textContent = '';
  document.body.dataset.state = 'loading';
  let inf;
  try {
    inf = await info(s.w);
    fillForm(s, inf);
    /* The summary (one workload, no baseline) comes with the panels. */
    const [report, summary] = await Promise.all([
      getJSON(`api/analysis?${query(s)}`),
      s.base ? Promise.resolve(null) : getJSON(`api/summary?${query(s, false)}`).catch((e) => ({ error: e.message })),
    ]);
    lastReport = report;
    setKernelNames([...inf.kernels.map((k) => k.name), ...reportKernelNames(report),
      ...(summary && summary.summary ? summary.summary.kernels.map((k) => k.name) : [])]);
    render(report, s, inf);
    if (summary) renderSummary(summary, s);
    for (const note of unmeasurableNotes(report).reverse()) $('content').insertBefore(note, $('content').firstChild);
    if (inf.simulated) {
      /* Never let replayed numbers pass for measurements. */
      const note = el('p', 'simulated', `Simulated device: these numbers replay the recording ${inf.simulated}; ` +
        'nothing was measured.');
      note.setAttribute('role', 'note');
      $('content').insertBefore(note, $('content').firstChild);
    }
    const n = report.workloads[report.workloads.length - 1];
    setStatus(`${n.dispatches_selected} of ${n.dispatches_total} dispatches, ${report.workloads[0].normalization}`);
    document.body.dataset.state = 'ready';
    /* When the first view was complete, in ms since the page began to load. */
    if (window.lumenFirstViewMs === undefined) window.lumenFirstViewMs = performance.now();
  } catch (e) {
    /* The old tables must not pass for the answer to the new selection. */
    clearResult();
    const msg = guiError(e.message, s);
    setStatus(msg, true);
    $('filter-error').textContent = msg;
    document.body.dataset.state = 'error';
  }
}

function clearResult() {
  for (const c of charts.splice(0)) c.destroy();
  $('content').innerHTML = '';
  $('panels').innerHTML = '';
  lastReport = null;
}

/* A server error in the GUI's words: the filter fields by their labels,
 * not the command line's flags. */
function guiError(message, s) {
  if (/^no dispatch matches/i.test(message)) {
    const parts = [];
    if (s.k) parts.push(`kernel filter '${s.k}'`);
    if (s.kn) parts.push(`kernel${s.kn.length > 1 ? 's' : ''} ${s.kn.map((k) => `'${k}'`).join(', ')}`);
    if (s.d) parts.push(`dispatches '${s.d}'`);
    if (s.g) parts.push(`GPUs '${s.g}'`);
    if (s.rank) parts.push(`ranks '${s.rank}'`);
    if (s.r) parts.push(`region '${s.r}'`);
    return parts.length ? `No dispatch matches ${parts.join(' and ')}` : 'No dispatch matches the filters';
  }
  return message.replace(/^-k '/, 'Kernel regex \'').replace(/^-d '?/, 'Dispatches: ').replace(/^-g '?/, 'GPUs: ')
    .replace(/^--rank: /, `Ranks '${s.rank || ''}': `).replace(/^--rank '?/, 'Ranks: ')
    .replace(/^-r '?/, 'Region: ');
}

function fmt(v) {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  const a = Math.abs(v);
  if (a !== 0 && (a < 0.01 || a >= 1e9)) return v.toExponential(2);
  return v.toLocaleString('en-US', { maximumFractionDigits: 2, minimumFractionDigits: 2 });
}

/* ---------------------------------------------------- kernel names
 *
 * Long kernel names shortened as the terminal shortens them: the argument
 * list of a demangled name becomes "(…)", then template arguments
 * collapse to "<…>" from the innermost level out until the name fits,
 * then the middle goes. Two different kernels never look alike: when
 * their shortened names would be equal, both show the part where the full
 * names differ. Widths count characters (code points). */

const NAME_CARD = 100; /* summary cards, the roofline's kernel list */
const NAME_CELL = 80; /* kernel cells of the tables, the roofline's hover */

/* s with the middle replaced by "…" to fit width characters, keeping the
 * character at index focus visible (focus < 0: none). */
function elideMiddle(s, width, focus) {
  const c = Array.from(s);
  const n = c.length;
  if (n <= width) return s;
  const part = (a, b) => c.slice(a, b).join('');
  if (focus < 0 || focus < Math.floor(width / 2) || focus + Math.floor(width / 4) >= n) {
    const head = Math.floor(((width - 1) * 2) / 3);
    return `${part(0, head)}…${part(n - (width - 1 - head), n)}`;
  }
  const head = Math.floor((width - 2) / 3), tail = Math.floor((width - 2) / 4), mid = width - 2 - head - tail;
  let from = Math.max(focus - Math.floor(mid / 2), head);
  if (from + mid > n - tail) from = n - tail - mid;
  return `${part(0, head)}…${part(from, from + mid)}…${part(n - tail, n)}`;
}

/* The index of the '(' that opens a demangled name's argument list: the
 * last one outside template arguments and other parentheses, or -1. */
function argumentList(s) {
  let angle = 0, paren = 0, last = -1;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '<') angle++;
    else if (ch === '>' && angle > 0) angle--;
    else if (ch === '(') {
      if (!angle && !paren) last = i;
      paren++;
    } else if (ch === ')' && paren > 0) paren--;
  }
  return last;
}

/* name with the template arguments nested deeper than keep levels
 * written as "<…>". */
function collapseTemplates(name, keep) {
  let depth = 0, out = '';
  for (const ch of name) {
    if (ch === '<') {
      depth++;
      if (depth === keep + 1) out += '<…';
      if (depth <= keep) out += '<';
    } else if (ch === '>' && depth > 0) {
      if (depth <= keep + 1) out += '>';
      depth--;
    } else if (depth <= keep) out += ch;
  }
  return out;
}

function templateDepth(name) {
  let depth = 0, most = 0;
  for (const ch of name) {
    if (ch === '<') most = Math.max(most, ++depth);
    else if (ch === '>' && depth > 0) depth--;
  }
  return most;
}

/* One name shortened to width characters; with focus >= 0 (a character
 * index), only the middle goes and that character stays visible. */
function shortName(name, width, focus = -1) {
  const n = Array.from(name).length;
  if (n <= width || width < 12) return name;
  if (focus >= 0) return elideMiddle(name, width, focus);
  const args = argumentList(name);
  let cur = args > 0 ? `${name.slice(0, args)}(…)` : name;
  for (let keep = templateDepth(cur) - 1; keep >= 0 && Array.from(cur).length > width; keep--)
    cur = collapseTemplates(cur, keep);
  return elideMiddle(cur, width, -1);
}

/* Shortened names of a list of (different) full names, distinct: names
 * that would look alike show, each, the part where it differs from the
 * most similar of them (its neighbours in sorted order). A Map full ->
 * shown. */
function shortNames(full, width) {
  const names = full.map((f) => shortName(f, width));
  const alike = new Map();
  names.forEach((s, i) => alike.set(s, (alike.get(s) || []).concat(i)));
  const common = (a, b) => {
    const x = Array.from(a), y = Array.from(b);
    let p = 0;
    while (p < x.length && x[p] === y[p]) p++;
    return p;
  };
  for (const group of alike.values()) {
    if (group.length < 2) continue;
    const sorted = group.slice().sort((a, b) => (full[a] < full[b] ? -1 : full[a] > full[b] ? 1 : 0));
    const focus = sorted.map((i, k) => Math.max(k > 0 ? common(full[i], full[sorted[k - 1]]) : 0,
      k + 1 < sorted.length ? common(full[i], full[sorted[k + 1]]) : 0));
    sorted.forEach((i, k) => { names[i] = shortName(full[i], width, focus[k]); });
  }
  /* Should two still look alike, they show in full. */
  const seen = new Map();
  names.forEach((s, i) => {
    const k = seen.get(s);
    if (k !== undefined && full[k] !== full[i]) { names[i] = full[i]; names[k] = full[k]; }
    seen.set(s, i);
  });
  return new Map(full.map((f, i) => [f, names[i]]));
}

/* The kernel names of the view (its workloads' kernels, the tables' and
 * the summary's) are shortened together so that none two look alike. */
let kernelNames = new Set();
const shortCache = new Map();

function setKernelNames(names) {
  kernelNames = new Set(names.filter((n) => typeof n === 'string'));
  shortCache.clear();
}

function kernelLabel(full, width) {
  if (!kernelNames.has(full)) {
    kernelNames.add(full);
    shortCache.clear();
  }
  if (!shortCache.has(width)) shortCache.set(width, shortNames(Array.from(kernelNames), width));
  return shortCache.get(width).get(full);
}

/* Every kernel name a report's tables show. */
function reportKernelNames(report) {
  const out = [];
  for (const p of report.panels) {
    for (const t of p.tables) {
      const k = kernelColumn(t.columns);
      if (k < 0) continue;
      for (const r of t.rows) {
        out.push(r.cells[k]);
        for (const c of r.compare || []) if (c && c.cells) out.push(c.cells[k]);
      }
    }
  }
  return out;
}

function cell(tr, v, cls) {
  const td = document.createElement('td');
  td.textContent = fmt(v);
  if (typeof v === 'number') {
    td.dataset.value = String(v);
    td.title = String(v);
  } else {
    td.className = 'text';
    if (typeof v === 'string') td.dataset.text = v;
  }
  if (cls) td.classList.add(cls);
  tr.appendChild(td);
  return td;
}

/* A comparison's Δ% cell: the change, and the baseline's value beside it
 * (the JSON's "cells" are the baseline's). */
function deltaCell(tr, dv, base) {
  const td = cell(tr, dv === null || dv === undefined ? null : dv, 'delta');
  if (typeof dv === 'number' && dv !== 0) td.classList.add(dv > 0 ? 'up' : 'down');
  const b = el('span', 'base', `base ${typeof base === 'number' ? fmt(base) : 'n/a'}`);
  if (typeof base === 'number') {
    b.dataset.value = String(base);
    td.title = `${typeof dv === 'number' ? `${dv} % from ` : ''}the baseline's ${base}`;
  }
  td.appendChild(b);
  return td;
}

function render(report, s, inf) {
  for (const c of charts.splice(0)) c.destroy();
  const main = $('content');
  const nav = $('panels');
  main.innerHTML = '';
  nav.innerHTML = '';
  const comparing = report.workloads.length > 1;
  for (const panel of report.panels) {
    const sec = document.createElement('section');
    sec.className = 'panel';
    sec.id = `panel-${panel.id}`;
    const h = document.createElement('h2');
    h.textContent = `${panel.id}. ${panel.title}`;
    sec.appendChild(h);
    const a = document.createElement('a');
    a.href = `#${location.hash.replace(/^#/, '')}`;
    a.textContent = `${panel.id}. ${panel.title}`;
    a.addEventListener('click', (ev) => { ev.preventDefault(); sec.scrollIntoView(); });
    nav.appendChild(a);
    for (const t of panel.tables) sec.appendChild(renderTable(t, panel, comparing, s, inf));
    main.appendChild(sec);
  }
  /* Roofline results whose architecture has no roofline panel: the chart
   * in a section of its own, where panel 4 would be. */
  const hasRoofTable = report.panels.some((p) => p.tables.some((t) => t.kind === 'roofline'));
  if (inf.roofline && !hasRoofTable) {
    const sec = el('section', 'panel');
    sec.id = 'panel-roofline';
    sec.appendChild(el('h2', '', 'Roofline'));
    sec.appendChild(rooflineChart(s, inf));
    const after = Array.from(main.children).find((n) => Number(n.id.replace(/^panel-/, '')) > 4);
    main.insertBefore(sec, after || null);
    const a = el('a', '', 'Roofline');
    a.href = location.hash;
    a.addEventListener('click', (ev) => { ev.preventDefault(); sec.scrollIntoView(); });
    nav.insertBefore(a, after ? nav.children[Array.from(main.children).indexOf(sec)] : null);
  }
  /* A multi-rank selection: its rank table leads the panels. */
  const ranks = renderRanks(report);
  if (ranks) {
    main.insertBefore(ranks, main.firstChild);
    const a = el('a', '', 'Ranks');
    a.href = location.hash;
    a.addEventListener('click', (ev) => { ev.preventDefault(); ranks.scrollIntoView(); });
    nav.insertBefore(a, nav.firstChild);
  }
  markKernel();
}

/* What an architecture's counters cannot measure (the JSON's
 * not_measurable), said once per architecture of the report instead of as
 * empty metrics: one line naming them, each reason when it is opened. */
function unmeasurableNotes(report) {
  const seen = new Set();
  const notes = [];
  for (const w of report.workloads) {
    if (!w.not_measurable || !w.not_measurable.length || seen.has(w.arch)) continue;
    seen.add(w.arch);
    const d = el('details', 'unmeasurable');
    d.setAttribute('role', 'note');
    d.appendChild(el('summary', '', `Not measurable on ${w.arch}: ${w.not_measurable.map((x) => x.what).join('; ')}`));
    const ul = el('ul');
    for (const x of w.not_measurable) ul.appendChild(el('li', '', `${x.what}: ${x.why}`));
    d.appendChild(ul);
    notes.push(d);
  }
  return notes;
}

/* ------------------------------------------------------------- summary */

const SEVERITY_MARK = { critical: '!!', warning: '!', info: 'i' };

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function timeText(ns) {
  if (ns === null || ns === undefined) return 'n/a';
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(2)} s`;
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${ns.toFixed(0)} ns`;
}

const pctText = (v) => (typeof v === 'number' ? `${v.toFixed(0)} %` : 'n/a');

/* "5,457.49 Gb/s" (a value with its unit; "38.49 %" for percentages). */
function valueText(v, unit) {
  if (typeof v !== 'number') return 'n/a';
  if (unit === 'Pct') return `${fmt(v)} %`;
  return unit ? `${fmt(v)} ${unit}` : fmt(v);
}

/* A sysinfo.csv the GPU's facts contradict: said above the cards, field
 * by field, since percentages of peak that rest on it are not real. */
function implausibleWarning(list) {
  const box = el('div', 'implausible');
  box.setAttribute('role', 'note');
  box.appendChild(el('p', 'head', `Implausible sysinfo.csv: ${list.length} field${list.length === 1 ? '' : 's'} ` +
    'cannot be right for this GPU. Percentages of peak that rest on them are not real; those above 100 % are ' +
    'not ranked.'));
  const ul = el('ul');
  for (const b of list) {
    const li = el('li');
    li.dataset.field = b.field;
    li.appendChild(el('code', 'field', b.field));
    li.appendChild(document.createTextNode(` is ${b.value}`));
    if (typeof b.expected === 'number') {
      li.appendChild(document.createTextNode('; expected '));
      li.appendChild(el('span', 'expected', fmt(b.expected)));
    }
    li.appendChild(document.createTextNode(`: ${b.why}`));
    ul.appendChild(li);
  }
  box.appendChild(ul);
  return box;
}

/* The roofline line of a card: where the kernel sits against its data
 * type's ceiling, or why it is not placed. */
function roofText(r) {
  if (r.pct_of_attainable === null || r.pct_of_attainable === undefined)
    return `Roofline: not placed (${r.not_placed || 'no data'})`;
  const work = r.type ? `mostly ${r.type} work, ` : '';
  const ceilings = [];
  if (typeof r.ceiling_gflops === 'number') ceilings.push(`${r.type ? `${r.type} ` : ''}ceiling ${fmt(r.ceiling_gflops)} GFLOP/s`);
  const mem = r.memory || 'HBM';
  if (typeof r.ceiling_hbm_gbs === 'number') ceilings.push(`${mem} ${fmt(r.ceiling_hbm_gbs)} GB/s`);
  const against = ceilings.length ? ` (${ceilings.join(', ')})` : '';
  const partial = r.ops_not_collected ? `; counting only the arithmetic collected (${r.ops_not_collected} and others were not)` : '';
  const head = `Roofline (${r.source}): ${work}${fmt(r.intensity)} FLOP/byte at ${mem}, ${fmt(r.gflops)} GFLOP/s`;
  if (r.above_attainable)
    return `${head} is above the attainable ${fmt(r.attainable_gflops)} GFLOP/s${against}, ` +
      `${pctText(r.pct_of_attainable)} of it: a ceiling is too low, so no bound is given${partial}`;
  const bound = r.bound ? `: ${r.bound}-bound${r.limit ? ` ${r.bound === 'memory' ? 'at' : 'on'} ${r.limit}` : ''}` : '';
  return `${head} = ${pctText(r.pct_of_attainable)} of the attainable ${fmt(r.attainable_gflops)} GFLOP/s${against}${bound}${partial}`;
}

/* One finding: its verdict (summary), what triggered it (the metrics
 * with this kernel's values), what to do, and the rule it came from. */
function findingItem(f) {
  const li = el('li', `finding ${f.severity}`);
  li.dataset.rule = f.rule;
  const d = el('details');
  d.open = true;
  const sm = el('summary');
  sm.appendChild(el('span', 'sev', SEVERITY_MARK[f.severity] || ''));
  let verdict = ` ${f.verdict}`;
  if (typeof f.gain === 'number' && f.gain > 0) verdict += ` (up to ${(f.gain * 100).toFixed(0)} % of its time)`;
  if (f.above_peak_metric)
    verdict += ` (rests on ${f.above_peak_metric} at ${pctText(f.above_peak_pct)} of its peak, which cannot be right)`;
  sm.appendChild(document.createTextNode(verdict));
  d.appendChild(sm);
  if (f.evidence && f.evidence.length) {
    const ev = el('p', 'evidence', 'From: ');
    f.evidence.forEach((x, m) => {
      if (m) ev.appendChild(document.createTextNode('; '));
      const span = el('span', 'metric', `${x.metric} ${valueText(x.value, x.unit)}`);
      span.dataset.metric = x.metric;
      if (typeof x.value === 'number') span.dataset.value = String(x.value);
      if (typeof x.pct === 'number' && x.unit !== 'Pct') span.textContent += ` (${pctText(x.pct)} of peak)`;
      ev.appendChild(span);
    });
    d.appendChild(ev);
  }
  if (f.explain) d.appendChild(el('p', 'explain', `${f.severity === 'info' ? '' : 'What to do: '}${f.explain}`));
  d.appendChild(el('p', 'note', `Rule ${f.rule}; supported by ${(f.uses || []).join(', ') || 'kernel facts'}; ` +
    `source: ${f.source}`));
  li.appendChild(d);
  return li;
}

/* One card per top kernel: share, busiest units as labelled bars with
 * what they limit, the metrics above their peak (never as bars), the
 * roofline position, and the rules that fired with their evidence. */
function summaryCard(k, i) {
  const card = el('article', 'card');
  card.dataset.kernel = k.name;
  activatable(card, `mark ${k.name} in the tables`, () => chooseKernel(k.name));
  const h = el('h3', 'kname', `${i + 1}. ${kernelLabel(k.name, NAME_CARD)}`);
  h.title = k.name;
  card.appendChild(h);
  card.appendChild(el('p', 'facts', `${k.share === null ? 'n/a' : (k.share * 100).toFixed(1)} % of the time · ` +
    `${k.calls} call${k.calls === 1 ? '' : 's'} · ${timeText(k.total_ns)} in all · ${timeText(k.mean_ns)} each`));
  /* A figure above its peak is not a real limiter: it never becomes a bar. */
  const real = (hl) => typeof hl.pct === 'number' && hl.pct <= 100.5;
  const bars = (k.highlights || []).filter(real);
  const above = (k.above_peak || []).concat((k.highlights || []).filter((hl) => !real(hl)));
  if (bars.length) {
    const box = el('div', 'bars');
    for (const hl of bars) {
      const row = el('div', 'bar');
      row.dataset.metric = hl.metric;
      const label = el('span', 'label', hl.metric);
      if (hl.limits) label.appendChild(el('span', `limits ${hl.limits}`, hl.limits));
      row.appendChild(label);
      const track = el('span', 'track');
      const fill = el('span', 'fill');
      fill.style.width = `${Math.max(0, Math.min(100, hl.pct))}%`;
      track.appendChild(fill);
      row.appendChild(track);
      row.appendChild(el('span', 'pct', `${pctText(hl.pct)} of peak (${fmt(hl.value)} ${hl.unit} of ${fmt(hl.peak)})`));
      box.appendChild(row);
    }
    card.appendChild(box);
  }
  if (above.length) {
    const p = el('p', 'above-peak');
    p.appendChild(el('span', 'head', 'Above 100 % of peak, so the peak or the counts cannot be right (not ranked): '));
    above.forEach((hl, m) => {
      if (m) p.appendChild(document.createTextNode('; '));
      const span = el('span', 'metric', `${hl.metric} ${pctText(hl.pct)} (${fmt(hl.value)} ${hl.unit} of ` +
        `${fmt(hl.peak)}${hl.limits ? `, ${hl.limits}` : ''})`);
      span.dataset.metric = hl.metric;
      if (typeof hl.pct === 'number') span.dataset.pct = String(hl.pct);
      p.appendChild(span);
    });
    card.appendChild(p);
  }
  const r = k.roofline || {};
  const roof = el('p', 'roof', roofText(r));
  for (const key of ['type', 'limit', 'bound']) if (r[key]) roof.dataset[key] = r[key];
  if (r.above_attainable) roof.dataset.aboveAttainable = 'true';
  card.appendChild(roof);
  const list = el('ul', 'findings');
  if (k.rules_not_evaluated) {
    const of = typeof k.rules_applied === 'number' ? ` of ${k.rules_applied}` : '';
    const li = el('li', 'finding unknown',
      `${k.findings.length ? '' : 'No rule fired; '}${k.rules_not_evaluated}${of} rules could not be evaluated: ` +
      `what they read was not collected (${k.rules_not_evaluated_metric}${k.rules_not_evaluated > 1 ? ', ...' : ''}).`);
    li.dataset.rules = String(k.rules_not_evaluated);
    if (of) li.dataset.of = String(k.rules_applied);
    list.appendChild(li);
  } else if (!k.findings.length) list.appendChild(el('li', 'finding none', 'No rule fired.'));
  for (const f of k.findings) list.appendChild(findingItem(f));
  card.appendChild(list);
  return card;
}

function renderSummary(data, s) {
  const main = $('content');
  const sec = el('section', 'panel summary');
  sec.id = 'panel-summary';
  sec.appendChild(el('h2', '', 'Summary: what limits each kernel'));
  if (data.error) {
    sec.appendChild(el('p', 'note', `No summary: ${data.error}`));
  } else {
    const sum = data.summary;
    if (sum.implausible_sysinfo && sum.implausible_sysinfo.length) sec.appendChild(implausibleWarning(sum.implausible_sysinfo));
    sec.appendChild(el('p', 'note', `${sum.kernels_total} kernel${sum.kernels_total === 1 ? '' : 's'}, ` +
      `${timeText(sum.total_ns)} of GPU time${sum.kernels.length < sum.kernels_total ? `; the ${sum.kernels.length} longest` : ''}`));
    if (sum.rules_error) sec.appendChild(el('p', 'note', `Rules not evaluated: ${sum.rules_error}`));
    sum.kernels.forEach((k, i) => sec.appendChild(summaryCard(k, i)));
  }
  main.insertBefore(sec, main.firstChild);
  const nav = $('panels');
  const a = el('a', '', 'Summary');
  a.href = location.hash;
  a.addEventListener('click', (ev) => { ev.preventDefault(); sec.scrollIntoView(); });
  nav.insertBefore(a, nav.firstChild);
  markKernel();
}

/* The values a row shows: the compared workload's when comparing (the
 * baseline's are the JSON's "cells"). */
function rowCells(row, comparing) {
  if (!(comparing && row.compare && row.compare[0])) return row.cells;
  /* A row the compared run lacks keeps the baseline's labels, so that the
   * rows stay the baseline's, in its order. */
  return row.compare[0].cells.map((v, i) => (v === null && typeof row.cells[i] === 'string' ? row.cells[i] : v));
}

function renderTable(t, panel, comparing, s, inf) {
  const box = document.createElement('div');
  box.className = 'tablebox';
  box.id = `table-${t.id}`;
  box.dataset.table = t.id;
  const h = document.createElement('h3');
  h.textContent = `${t.id} ${t.title || panel.title}`;
  box.appendChild(h);
  if (t.note) {
    const p = document.createElement('p');
    p.className = 'note';
    p.textContent = t.note;
    box.appendChild(p);
  }
  if (t.style === 'mem_chart') box.appendChild(memoryChart(t, comparing));
  else if (t.kind === 'roofline') box.appendChild(rooflineChart(s, inf));
  else {
    const chart = chartFor(t, panel, comparing);
    if (chart) box.appendChild(chart);
  }
  const wrap = document.createElement('div');
  wrap.className = 'scroll';
  const table = document.createElement('table');
  const head = document.createElement('tr');
  const numericCols = new Set();
  for (const row of t.rows)
    row.cells.forEach((v, i) => { if (typeof v === 'number' && i > 0) numericCols.add(i); });
  const kcol = kernelColumn(t.columns);
  t.columns.forEach((c, i) => {
    const th = document.createElement('th');
    th.textContent = c;
    if (i === 0 || !numericCols.has(i)) th.className = 'text';
    if (i === kcol) table.dataset.kernelCol = String(head.children.length);
    head.appendChild(th);
    if (comparing && numericCols.has(i) && t.kind !== 'sysinfo') {
      const d = document.createElement('th');
      d.textContent = 'Δ%';
      head.appendChild(d);
    }
  });
  /* A lumen profile's metrics fed by executions that disagree (the JSON's
   * "sets_differ"): a "Sets differ" column with their spread. */
  const flagged = !comparing && t.rows.some((r) => r.sets_differ);
  if (flagged) {
    const th = document.createElement('th');
    th.textContent = 'Sets differ';
    th.title = 'the executions this metric\'s counters came from differ by more than 5 %';
    head.appendChild(th);
  }
  table.appendChild(head);
  const addRow = (row, cells, deltas) => {
    const tr = document.createElement('tr');
    tr.dataset.row = row.id;
    if (row.description) tr.title = row.description;
    if (row.sets_differ) tr.classList.add('sets-differ');
    cells.forEach((v, i) => {
      const td = cell(tr, v);
      /* A long kernel name shortened, the whole name on hover. */
      if (i === kcol && typeof v === 'string') {
        td.textContent = kernelLabel(v, NAME_CELL);
        td.title = v;
        td.classList.add('kname');
      }
      if (comparing && numericCols.has(i) && t.kind !== 'sysinfo') deltaCell(tr, deltas ? deltas[i] : null, row.cells[i]);
    });
    if (flagged) {
      const td = cell(tr, row.sets_differ ? `${(row.spread * 100).toFixed(1)}%` : '', 'spread');
      if (row.sets_differ) td.title = 'relative spread of what every counter set measured';
    }
    /* A dispatch row opens its drill-down; a kernel row marks its kernel. */
    const kname = kcol >= 0 ? cells[kcol] : null;
    const dcol = t.columns.indexOf('Dispatch_ID');
    if (t.kind === 'dispatches' && dcol >= 0 && typeof cells[dcol] === 'number')
      activatable(tr, `dispatch ${cells[dcol]}: its values`, () => openDrill(s, cells[dcol], String(kname), box));
    else if (t.kind === 'top_kernels' && typeof kname === 'string')
      activatable(tr, `mark ${kname} in the tables`, () => chooseKernel(kname));
    table.appendChild(tr);
  };
  for (const row of t.rows)
    addRow(row, rowCells(row, comparing), comparing && row.compare && row.compare[0] ? row.compare[0].delta_pct : null);
  wrap.appendChild(table);
  /* A long table (a row per dispatch or kernel) that the server cut to its
   * first page: the page holds one page of rows at a time and asks
   * /api/rows for the others, sorted and filtered there. */
  if (t.rows_total !== undefined && comparing) {
    /* Pages come from one run; a comparison keeps the rows the report
     * lined up, in the baseline's order. */
    box.appendChild(el('p', 'note', `Compared: the first ${fmt(t.rows.length)} of ${fmt(t.rows_total)} rows, in the ` +
      'baseline\'s order; choose no baseline to page through all of them.'));
  } else if (t.rows_total !== undefined) box.appendChild(pager(t, s, box, table, head, addRow));
  box.appendChild(wrap);
  return box;
}

const PAGE_ROWS = 100;

function pager(t, s, box, table, head, addRow) {
  const state = { offset: 0, sort: null, order: 'asc', filter: '', matched: t.rows_total };
  const bar = el('div', 'pager');
  const prev = el('button', 'prev', '‹ previous');
  const next = el('button', 'next', 'next ›');
  const range = el('span', 'range');
  const filter = el('input', 'filter');
  prev.type = next.type = 'button';
  filter.type = 'search';
  filter.placeholder = 'filter rows';
  filter.setAttribute('aria-label', `filter the rows of table ${t.id}`);
  bar.append(prev, range, next, filter);
  const mark = () => {
    const last = Math.min(state.offset + PAGE_ROWS, state.matched);
    range.textContent = state.matched ? `rows ${fmt(state.offset + 1)}–${fmt(last)} of ${fmt(state.matched)}` +
      (state.matched !== t.rows_total ? ` (${fmt(t.rows_total)} in all)` : '') : 'no rows match';
    prev.disabled = state.offset === 0;
    next.disabled = last >= state.matched;
    box.dataset.offset = String(state.offset);
    box.dataset.matched = String(state.matched);
    box.dataset.rowsTotal = String(t.rows_total);
    head.querySelectorAll('th[data-col]').forEach((th) => {
      th.classList.toggle('sorted', Number(th.dataset.col) === state.sort);
      th.dataset.order = Number(th.dataset.col) === state.sort ? state.order : '';
    });
  };
  let generation = 0;
  const load = async () => {
    const mine = ++generation;
    box.dataset.pageState = 'loading';
    const p = new URLSearchParams(query(s, false));
    p.set('t', t.id);
    p.set('offset', String(state.offset));
    p.set('limit', String(PAGE_ROWS));
    if (state.sort !== null) { p.set('sort', String(state.sort)); p.set('order', state.order); }
    if (state.filter) p.set('filter', state.filter);
    try {
      const page = await getJSON(`api/rows?${p.toString()}`);
      if (mine !== generation) return;
      table.querySelectorAll('tr[data-row]').forEach((tr) => tr.remove());
      for (const row of page.rows) addRow(row, row.cells, null);
      markKernel();
      state.matched = page.rows_matched;
      mark();
      box.dataset.pageState = 'ready';
    } catch (e) {
      if (mine !== generation) return;
      range.textContent = `rows: ${e.message}`;
      box.dataset.pageState = 'error';
    }
  };
  prev.addEventListener('click', () => { state.offset = Math.max(0, state.offset - PAGE_ROWS); load(); });
  next.addEventListener('click', () => { state.offset += PAGE_ROWS; load(); });
  let typing = null;
  filter.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => { state.filter = filter.value.trim(); state.offset = 0; load(); }, 250);
  });
  /* Headers sort: ascending first, descending on the second click. A
   * compared table's Δ% headers do not sort (the pages come from one run). */
  let col = 0;
  head.querySelectorAll('th').forEach((th) => {
    if (th.textContent === 'Δ%' || th.textContent === 'Sets differ') return;
    th.dataset.col = String(col++);
    th.classList.add('sortable');
    th.title = 'sort by this column';
    activatable(th, null, () => {
      const c = Number(th.dataset.col);
      state.order = state.sort === c && state.order === 'asc' ? 'desc' : 'asc';
      state.sort = c;
      state.offset = 0;
      load();
    });
  });
  mark();
  box.dataset.pageState = 'ready';
  return bar;
}

/* ------------------------------------------------------------- charts */

function canvasBox(tall) {
  const div = document.createElement('div');
  div.className = tall ? 'chart tall' : 'chart';
  const canvas = document.createElement('canvas');
  div.appendChild(canvas);
  return [div, canvas];
}

function makeChart(canvas, config, onReady) {
  if (!window.Chart) return;
  config.options = Object.assign({ responsive: true, maintainAspectRatio: false, animation: false }, config.options || {});
  requestAnimationFrame(() => {
    const chart = new window.Chart(canvas, config);
    charts.push(chart);
    if (onReady) onReady(chart);
  });
}

const BAR_ROW_PX = 20;

function chartFor(t, panel, comparing) {
  const col = (name) => t.columns.indexOf(name);
  const labels = t.rows.map((r) => String(r.cells[0]));
  const series = (i, which) => t.rows.map((r) => {
    const v = which ? (r.compare && r.compare[0] ? r.compare[0].cells[i] : null) : r.cells[i];
    return typeof v === 'number' ? v : null;
  });
  /* Horizontal bars: a label for every bar (no auto-skipping), the chart
   * as tall as its rows need. */
  const bar = (i, title, horizontal) => {
    const [div, canvas] = canvasBox(t.rows.length > 12);
    const datasets = [{ label: comparing ? 'baseline' : title, data: series(i, false), backgroundColor: '#2f5eb8' }];
    if (comparing) datasets.push({ label: 'compared', data: series(i, true), backgroundColor: '#e59f2b' });
    const options = { indexAxis: horizontal ? 'y' : 'x', plugins: { legend: { display: comparing }, title: { display: true, text: title } } };
    if (horizontal) {
      options.scales = { y: { ticks: { autoSkip: false, font: { size: 12 } } } };
      div.style.height = `${Math.max(160, t.rows.length * (comparing ? BAR_ROW_PX + 6 : BAR_ROW_PX) + (comparing ? 100 : 70))}px`;
    }
    makeChart(canvas, { type: 'bar', data: { labels, datasets }, options });
    return div;
  };
  if (col('Pct of Peak') > 0) return bar(col('Pct of Peak'), 'Percent of peak', true);
  if (t.style === 'bar' && col('Avg') > 0) return bar(col('Avg'), 'Avg', true);
  if (panel.id === 10 && col('Avg') > 0) return bar(col('Avg'), 'Avg', true);
  if (t.style === 'multi_bar') {
    const [div, canvas] = canvasBox(true);
    const palette = ['#2f5eb8', '#e59f2b', '#1a7f37', '#8e44ad', '#c0392b'];
    const datasets = t.columns.slice(1).map((name, k) => ({
      label: name, data: series(k + 1, comparing), backgroundColor: palette[k % palette.length],
    }));
    makeChart(canvas, { type: 'bar', data: { labels, datasets }, options: { plugins: { title: { display: true, text: t.title } } } });
    return div;
  }
  if (t.style === 'box' && col('Q1') > 0 && col('Q3') > 0) {
    const [div, canvas] = canvasBox(t.rows.length > 12);
    const q1 = series(col('Q1'), comparing), q3 = series(col('Q3'), comparing), med = series(col('Median'), comparing);
    makeChart(canvas, {
      type: 'bar',
      data: {
        labels,
        datasets: [
          { label: 'Q1 to Q3', data: q1.map((v, i) => (v === null || q3[i] === null ? null : [v, q3[i]])), backgroundColor: '#9db4e6' },
          { type: 'line', label: 'median', data: med, showLine: false, pointStyle: 'line', pointRadius: 8, borderColor: '#1d2330' },
        ],
      },
      options: { plugins: { title: { display: true, text: t.title } } },
    });
    return div;
  }
  return null;
}

/* The memory chart as a diagram: blocks with their numbers in place. */
function memoryChart(t, comparing) {
  const v = {};
  for (const row of t.rows) v[row.cells[0]] = rowCells(row, comparing)[1];
  const blocks = [
    { x: 10, y: 10, w: 190, title: 'Wavefronts', names: ['Wavefront Occupancy', 'Wave Life', 'Wavefronts', 'Workgroups', 'Active CUs', 'Num CUs', 'VGPR', 'SGPR', 'LDS Allocation', 'Scratch Allocation'] },
    { x: 230, y: 10, w: 150, title: 'Instructions', names: ['SALU', 'SMEM', 'VALU', 'MFMA', 'VMEM', 'LDS', 'GWS', 'BR'] },
    { x: 410, y: 10, w: 170, title: 'LDS', names: ['LDS Req', 'LDS Util', 'LDS Latency'] },
    { x: 410, y: 110, w: 170, title: 'Vector L1', names: ['VL1 Rd', 'VL1 Wr', 'VL1 Atomic', 'VL1 Hit', 'VL1 Lat', 'VL1 Coalesce', 'VL1 Stall'] },
    { x: 410, y: 270, w: 170, title: 'Scalar L1D', names: ['VL1D Rd', 'VL1D Hit', 'VL1D Lat'] },
    { x: 410, y: 370, w: 170, title: 'Instr. L1', names: ['IL1 Fetch', 'IL1 Hit', 'IL1 Lat'] },
    { x: 740, y: 110, w: 170, title: 'L2', names: ['L2 Rd', 'L2 Wr', 'L2 Atomic', 'L2 Hit', 'L2 Rd Lat', 'L2 Wr Lat'] },
    { x: 960, y: 110, w: 170, title: 'Fabric', names: ['Fabric_L2 Rd', 'Fabric_L2 Wr', 'Fabric_L2 Atomic', 'Fabric Rd Lat', 'Fabric Wr Lat', 'Fabric Atomic Lat'] },
    { x: 960, y: 300, w: 170, title: 'HBM', names: ['HBM Rd', 'HBM Wr'] },
  ];
  const links = [
    { from: 3, to: 6, names: ['VL1_L2 Rd', 'VL1_L2 Wr', 'VL1_L2 Atomic'] },
    { from: 4, to: 6, names: ['VL1D_L2 Rd', 'VL1D_L2 Wr', 'VL1D_L2 Atomic'] },
    { from: 5, to: 6, names: ['IL1_L2 Rd'] },
  ];
  const NS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('class', 'memchart');
  svg.setAttribute('viewBox', '0 0 1150 460');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', 'memory chart');
  const text = (x, y, s, cls, metric) => {
    const e = document.createElementNS(NS, 'text');
    e.setAttribute('x', x);
    e.setAttribute('y', y);
    if (cls) e.setAttribute('class', cls);
    if (metric) {
      e.dataset.metric = metric;
      if (typeof v[metric] === 'number') e.dataset.value = String(v[metric]);
    }
    e.textContent = s;
    svg.appendChild(e);
  };
  for (const b of blocks) {
    const h = 24 + b.names.length * 15;
    b.h = h;
    const r = document.createElementNS(NS, 'rect');
    r.setAttribute('x', b.x);
    r.setAttribute('y', b.y);
    r.setAttribute('width', b.w);
    r.setAttribute('height', h);
    r.setAttribute('rx', 4);
    r.setAttribute('class', 'block');
    svg.appendChild(r);
    text(b.x + 8, b.y + 16, b.title, 'title');
    b.names.forEach((n, i) => text(b.x + 8, b.y + 32 + i * 15, `${n.replace(/^(VL1D|VL1|IL1|L2|Fabric_L2|Fabric|HBM|LDS) /, '')}: ${fmt(v[n])}`, 'v', n));
  }
  const line = (x1, y1, x2, y2) => {
    const l = document.createElementNS(NS, 'line');
    l.setAttribute('x1', x1); l.setAttribute('y1', y1); l.setAttribute('x2', x2); l.setAttribute('y2', y2);
    svg.appendChild(l);
  };
  for (const k of links) {
    const a = blocks[k.from], b = blocks[k.to];
    const y = a.y + a.h / 2;
    line(a.x + a.w, y, b.x, Math.min(Math.max(y, b.y + 10), b.y + b.h - 10));
    text(a.x + a.w + 6, y - 4, k.names.map((n) => fmt(v[n])).join(' / '), 'v', k.names[0]);
  }
  line(blocks[1].x + blocks[1].w, 60, blocks[2].x, 40);
  line(blocks[1].x + blocks[1].w, 90, blocks[3].x, 150);
  line(blocks[6].x + blocks[6].w, 160, blocks[7].x, 160);
  line(blocks[7].x + 85, blocks[7].y + blocks[7].h, blocks[8].x + 85, blocks[8].y);
  return svg;
}

/* ------------------------------------------------------------ roofline
 *
 * Ceilings from roofline.csv (/api/roofline): each memory level a line of
 * its bandwidth up to the highest compute ceiling; each compute ceiling
 * present a level line from its own ridge point (where the HBM line
 * reaches it), labelled with its data type and value; one point per
 * kernel at its HBM intensity, its L2 and L1 intensities in the hover. */

const ROOF_MEMORY = [['HBM', '#2f5eb8'], ['L2', '#c0392b'], ['L1', '#1a7f37'], ['LDS', '#8e44ad']];
const ROOF_COMPUTE = [['FP32', 'FP32'], ['FP64', 'FP64'], ['MFMA_BF16', 'MFMA BF16'], ['MFMA_F16', 'MFMA F16'],
  ['MFMA_F32', 'MFMA F32'], ['MFMA_F64', 'MFMA F64'], ['MFMA_I8', 'MFMA I8']];
const ROOF_FONT = '11px system-ui, sans-serif';
const positive = (v) => typeof v === 'number' && Number.isFinite(v) && v > 0;
const wholeText = (v) => Math.round(v).toLocaleString('en-US');
const decade = (v, up) => 10 ** (up ? Math.ceil(Math.log10(v)) : Math.floor(Math.log10(v)));

/* What the chart draws, from the JSON: ceilings, points, the kernels not
 * placed (and why), and the axes' ranges. */
function rooflineModel(r) {
  const c = r.ceilings || {};
  const memory = ROOF_MEMORY.filter(([k]) => positive(c[k])).map(([key, color]) => ({
    kind: 'memory', key, value: c[key], color, label: `${key} ${wholeText(c[key])} GB/s`,
  }));
  const compute = ROOF_COMPUTE.filter(([k]) => positive(c[k])).map(([key, name]) => ({
    kind: 'compute', key, value: c[key], label: `${name} ${wholeText(c[key])} ${key === 'MFMA_I8' ? 'GOP/s' : 'GFLOP/s'}`,
  }));
  const placed = [], unplaced = [];
  for (const pt of r.points || []) {
    if (positive(pt.gflops_per_s) && pt.ai && positive(pt.ai.HBM)) placed.push(pt);
    else unplaced.push({ kernel: pt.kernel, why: !positive(pt.gflops_per_s)
      ? (positive(pt.flops) ? 'no duration' : 'no floating-point work') : 'no HBM traffic measured' });
  }
  /* Compute ceilings start where the HBM line (else the slowest level
   * drawn) reaches them. */
  const base = positive(c.HBM) ? c.HBM : (memory.length ? Math.min(...memory.map((m) => m.value)) : null);
  const top = compute.length ? Math.max(...compute.map((m) => m.value)) : null;
  const xs = placed.map((p) => p.ai.HBM), ys = placed.map((p) => p.gflops_per_s);
  if (base) xs.push(...compute.map((m) => m.value / base));
  if (top) xs.push(...memory.map((m) => top / m.value));
  const xmin = decade(Math.min(0.01, ...xs.map((x) => x / 2)), false);
  const xmax = decade(Math.max(100, ...xs.map((x) => x * 4)), true);
  const highest = Math.max(top || 0, ...ys, ...(top ? [] : memory.map((m) => m.value * xmax)), 1);
  const ymin = decade(Math.min(...memory.map((m) => m.value * xmin), ...ys.map((y) => y / 2), highest / 1e4), false);
  return { memory, compute, placed, unplaced, base, top, xmin, xmax, ymin, ymax: highest * 3 };
}

/* Writes each ceiling's label by its line (compute ceilings at their
 * right ends, in the margin, moved apart so that none covers another and
 * joined to their line; memory labels along their line), and each point's
 * number; keeps what it wrote in chart.$lumenLabels. */
const ceilingLabels = {
  id: 'lumenCeilingLabels',
  afterDatasetsDraw(chart) {
    const { ctx, chartArea: area } = chart;
    const drawn = [];
    const h = 12, gap = 2;
    ctx.save();
    ctx.font = ROOF_FONT;
    ctx.textBaseline = 'middle';
    const ends = [];
    chart.data.datasets.forEach((ds, di) => {
      if (ds.lumen && ds.lumen.kind === 'compute')
        ends.push({ ds, y: chart.getDatasetMeta(di).data[1].y });
    });
    /* Top to bottom, each at least a line below the one above; pushed
     * back up if the last would fall off the chart. */
    ends.sort((a, b) => a.y - b.y);
    ends.forEach((e, i) => { e.at = Math.max(e.y, i ? ends[i - 1].at + h + gap : area.top); });
    for (let i = ends.length - 1; i >= 0; i--) {
      const limit = i === ends.length - 1 ? area.bottom - h / 2 : ends[i + 1].at - h - gap;
      if (ends[i].at > limit) ends[i].at = limit;
    }
    for (const e of ends) {
      const x = area.right + 10, w = ctx.measureText(e.ds.label).width;
      ctx.strokeStyle = '#687082';
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(area.right, e.y);
      ctx.lineTo(x - 2, e.at);
      ctx.stroke();
      ctx.fillStyle = '#3d4350';
      ctx.fillText(e.ds.label, x, e.at);
      drawn.push({ key: e.ds.lumen.key, text: e.ds.label, left: x, right: x + w, top: e.at - h / 2, bottom: e.at + h / 2 });
    }
    ctx.textBaseline = 'bottom';
    /* Memory lines are parallel: their labels are placed in the frame of
     * the lines (u along them, v across, down), each on the side of its
     * line with room for it, sliding along to keep clear of the others. */
    const lines = [];
    chart.data.datasets.forEach((ds, di) => {
      if (!ds.lumen || ds.lumen.kind !== 'memory') return;
      const [p0, p1] = chart.getDatasetMeta(di).data;
      lines.push({ ds, p0, p1 });
    });
    if (lines.length) {
      const { p0: a0, p1: a1 } = lines[0];
      const angle = Math.atan2(a1.y - a0.y, a1.x - a0.x);
      const e1 = [Math.cos(angle), Math.sin(angle)], e2 = [-Math.sin(angle), Math.cos(angle)];
      for (const l of lines) {
        l.v = l.p0.x * e2[0] + l.p0.y * e2[1];
        l.u = l.p0.x * e1[0] + l.p0.y * e1[1];
      }
      const taken = [];
      for (const l of lines) {
        const vs = lines.filter((o) => o !== l).map((o) => o.v);
        const roomAbove = Math.min(Infinity, ...vs.filter((v) => v < l.v).map((v) => l.v - v));
        const roomBelow = Math.min(Infinity, ...vs.filter((v) => v > l.v).map((v) => v - l.v));
        const above = roomAbove >= h + 6 || roomAbove >= roomBelow;
        const v0 = above ? l.v - 2 - h : l.v + 2, v1 = v0 + h;
        const w = ctx.measureText(l.ds.label).width;
        let u0 = l.u + 16;
        for (let hit; (hit = taken.find((o) => u0 < o.u1 + 8 && o.u0 < u0 + w + 8 && v0 < o.v1 && o.v0 < v1)); ) u0 = hit.u1 + 8;
        taken.push({ u0, u1: u0 + w, v0, v1 });
        const at = (uu, vv) => [uu * e1[0] + vv * e2[0], uu * e1[1] + vv * e2[1]];
        const [x, y] = at(u0, v0);
        ctx.save();
        ctx.translate(x, y);
        ctx.rotate(angle);
        ctx.textBaseline = 'top';
        ctx.fillStyle = l.ds.lumen.color;
        ctx.fillText(l.ds.label, 0, 0);
        ctx.restore();
        const corners = [at(u0, v0), at(u0 + w, v0), at(u0, v1), at(u0 + w, v1)];
        drawn.push({ key: l.ds.lumen.key, text: l.ds.label, side: above ? 'above' : 'below',
          left: Math.min(...corners.map((q) => q[0])), right: Math.max(...corners.map((q) => q[0])),
          top: Math.min(...corners.map((q) => q[1])), bottom: Math.max(...corners.map((q) => q[1])) });
      }
    }
    chart.data.datasets.forEach((ds, di) => {
      if (!ds.lumen || ds.lumen.kind !== 'kernels') return;
      ctx.fillStyle = '#1d2330';
      chart.getDatasetMeta(di).data.forEach((pt, n) => ctx.fillText(String(ds.data[n].n), pt.x + 7, pt.y - 4));
    });
    ctx.restore();
    chart.$lumenLabels = drawn;
  },
};

/* A log axis's tick label: 0.01, 0.2, 5, 10, 300, 2k, 1M; only for
 * mantissas in keep (1, 2, 5), else none. */
function logTick(v, keep) {
  const e = Math.floor(Math.log10(v) + 1e-9);
  const mant = Math.round(v / 10 ** e);
  if (!keep.includes(mant) || Math.abs(v / 10 ** e - mant) > 1e-6) return '';
  if (v >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (v >= 1e3) return `${+(v / 1e3).toPrecision(3)}k`;
  return String(+v.toPrecision(3));
}

/* Grid lines at the labelled ticks only. */
const majorGrid = (ctx) => (ctx.tick && ctx.tick.label ? 'rgba(0, 0, 0, 0.1)' : 'transparent');

/* The hover of a kernel's point: its name, GFLOP/s and intensities. */
function pointHover(p) {
  const lines = [`${fmt(p.y)} GFLOP/s`, `${fmt(p.ai.HBM)} FLOP/byte at HBM`];
  if (positive(p.ai.L2)) lines.push(`${fmt(p.ai.L2)} FLOP/byte at L2`);
  if (positive(p.ai.L1)) lines.push(`${fmt(p.ai.L1)} FLOP/byte at L1`);
  lines.push(`${fmt(p.calls)} call${p.calls === 1 ? '' : 's'}`);
  return lines;
}

function rooflineChart(s, inf) {
  if (!inf.roofline) {
    const p = document.createElement('p');
    p.className = 'note';
    p.textContent = 'This workload has no roofline benchmark results.';
    return p;
  }
  const box = el('div', 'roofline');
  box.id = 'roofline';
  const [div, canvas] = canvasBox(true);
  box.appendChild(div);
  const sel = Object.assign({}, s);
  delete sel.base;
  getJSON(`api/roofline?${query(sel, false)}`).then((r) => {
    const m = rooflineModel(r);
    const datasets = [];
    for (const c of m.memory) {
      const end = m.top ? m.top / c.value : m.xmax;
      datasets.push({ type: 'line', label: c.label, lumen: c, borderColor: c.color, pointRadius: 0, pointHitRadius: 0, borderWidth: 1.5,
        data: [{ x: m.xmin, y: m.xmin * c.value }, { x: end, y: end * c.value }] });
    }
    for (const c of m.compute) {
      datasets.push({ type: 'line', label: c.label, lumen: c, borderColor: '#687082', borderDash: [4, 3], pointRadius: 0,
        pointHitRadius: 0, borderWidth: 1, data: [{ x: m.base ? c.value / m.base : m.xmin, y: c.value }, { x: m.xmax, y: c.value }] });
    }
    datasets.push({
      type: 'scatter', label: 'kernels (at HBM)', lumen: { kind: 'kernels' }, backgroundColor: '#e59f2b', borderColor: '#1d2330',
      borderWidth: 1, pointRadius: 6, pointHoverRadius: 8,
      data: m.placed.map((pt, n) => ({ x: pt.ai.HBM, y: pt.gflops_per_s, kernel: pt.kernel, ai: pt.ai, calls: pt.calls, n: n + 1 })),
    });
    box.dataset.points = String(m.placed.length);
    box.dataset.kernels = String((r.points || []).length);
    box.dataset.ceilings = JSON.stringify([...m.memory, ...m.compute].map((c) => c.label));
    /* The kernels by number, the whole name on hover; those not placed. */
    if (m.placed.length) {
      const ol = el('ol', 'roof-kernels');
      m.placed.forEach((pt) => {
        const li = el('li', '', `${kernelLabel(pt.kernel, NAME_CARD)}: ${fmt(pt.gflops_per_s)} GFLOP/s at ` +
          `${fmt(pt.ai.HBM)} FLOP/byte (HBM)`);
        li.title = pt.kernel;
        li.dataset.kernel = pt.kernel;
        ol.appendChild(li);
      });
      box.appendChild(ol);
    }
    if (m.unplaced.length) {
      const p = el('p', 'note roof-unplaced', 'Not on the roofline: ');
      m.unplaced.forEach((u, n) => {
        if (n) p.appendChild(document.createTextNode('; '));
        const span = el('span', '', `${kernelLabel(u.kernel, NAME_CELL)} (${u.why})`);
        span.title = u.kernel;
        span.dataset.kernel = u.kernel;
        p.appendChild(span);
      });
      box.appendChild(p);
    }
    /* Room at the right for the compute ceilings' labels. */
    const measure = document.createElement('canvas').getContext('2d');
    measure.font = ROOF_FONT;
    const right = Math.max(10, ...m.compute.map((c) => measure.measureText(c.label).width + 20));
    makeChart(canvas, {
      type: 'scatter',
      data: { datasets },
      plugins: [ceilingLabels],
      options: {
        layout: { padding: { right } },
        scales: {
          x: { type: 'logarithmic', min: m.xmin, max: m.xmax, title: { display: true, text: 'Arithmetic intensity at HBM (FLOP/byte)' },
            ticks: { autoSkip: false, maxRotation: 0, callback: (v) => logTick(v, [1, 2, 5]) }, grid: { color: majorGrid } },
          y: { type: 'logarithmic', min: m.ymin, max: m.ymax, title: { display: true, text: 'Performance (GFLOP/s)' },
            ticks: { autoSkip: false, callback: (v) => logTick(v, [1, 3]) }, grid: { color: majorGrid } },
        },
        plugins: {
          legend: { display: false },
          tooltip: {
            filter: (item) => item.dataset.lumen && item.dataset.lumen.kind === 'kernels',
            callbacks: {
              title: (items) => items.map((it) => `${it.raw.n}. ${kernelLabel(it.raw.kernel, NAME_CELL)}`),
              label: (ctx) => pointHover(ctx.raw),
            },
          },
        },
      },
    }, () => { box.dataset.state = 'ready'; });
  }).catch((e) => {
    box.textContent = `roofline: ${e.message}`;
    box.dataset.state = 'error';
  });
  return box;
}

/* What the roofline draws, for tests: its points (and where they are on
 * the canvas), ceilings, the labels written, the axes and the hover. */
window.lumenRoofline = () => {
  const canvas = document.querySelector('#roofline canvas');
  const chart = canvas && window.Chart ? window.Chart.getChart(canvas) : null;
  if (!chart || !chart.$lumenLabels) return null;
  const out = { points: [], ceilings: [], labels: chart.$lumenLabels, area: Object.assign({}, chart.chartArea),
    x: { min: chart.scales.x.min, max: chart.scales.x.max }, y: { min: chart.scales.y.min, max: chart.scales.y.max }, tooltip: null };
  chart.data.datasets.forEach((ds, di) => {
    if (!ds.lumen) return;
    if (ds.lumen.kind === 'kernels') {
      const meta = chart.getDatasetMeta(di);
      ds.data.forEach((p, n) => out.points.push({ kernel: p.kernel, x: p.x, y: p.y, px: meta.data[n].x, py: meta.data[n].y }));
    } else out.ceilings.push({ kind: ds.lumen.kind, key: ds.lumen.key, value: ds.lumen.value, label: ds.label, data: ds.data });
  });
  const t = chart.tooltip;
  if (t && t.opacity > 0 && t.dataPoints && t.dataPoints.length)
    out.tooltip = { title: t.title, lines: t.body.flatMap((b) => b.lines) };
  return out;
};

window.lumenReport = () => lastReport;
document.addEventListener('DOMContentLoaded', init);
