/*
 * drill.js - the views that follow a choice on the page: one dispatch's
 * values (the analysis with the dispatch filter set to that dispatch) with
 * a chart of one metric across the dispatches of its kernel
 * (/api/series), and the kernel chosen in the summary or the top-kernels
 * table, marked in every table that has a kernel column.
 *
 * Loaded before app.js, whose helpers (getJSON, query, el, fmt, charts)
 * it calls only once the page runs.
 */
'use strict';

let chosenKernel = null;

/* Rows and cards can be used like buttons: focusable, Enter or Space. */
function activatable(node, label, action) {
  node.tabIndex = 0;
  node.setAttribute('role', 'button');
  if (label) node.setAttribute('aria-label', label);
  node.addEventListener('click', (ev) => {
    /* A click on a control inside (a finding's summary) is its own. */
    if (ev.target.closest('summary, a, button, input, select')) return;
    action();
  });
  node.addEventListener('keydown', (ev) => {
    if (ev.target !== node || (ev.key !== 'Enter' && ev.key !== ' ')) return;
    ev.preventDefault();
    action();
  });
}

/* The column of table t (its titles) that names kernels, or -1. */
function kernelColumn(columns) {
  return columns.findIndex((c) => c === 'Kernel_Name' || c === 'Kernel' || c === 'Kernel Name');
}

/* Mark the rows of every table whose kernel cell is the chosen kernel, and
 * its summary card. Called after each choice and whenever rows are drawn. */
function markKernel() {
  document.querySelectorAll('tr.chosen-kernel, .card.chosen-kernel').forEach((n) => {
    n.classList.remove('chosen-kernel');
    n.removeAttribute('aria-current');
  });
  if (chosenKernel === null) return;
  document.querySelectorAll('table[data-kernel-col]').forEach((table) => {
    const k = Number(table.dataset.kernelCol);
    table.querySelectorAll('tr[data-row]').forEach((tr) => {
      const td = tr.children[k];
      if (td && td.dataset.text === chosenKernel) {
        tr.classList.add('chosen-kernel');
        tr.setAttribute('aria-current', 'true');
      }
    });
  });
  document.querySelectorAll('#panel-summary .card').forEach((c) => {
    if (c.dataset.kernel === chosenKernel) {
      c.classList.add('chosen-kernel');
      c.setAttribute('aria-current', 'true');
    }
  });
  const note = document.getElementById('chosen');
  if (note) {
    note.textContent = `Marked: ${chosenKernel.length > 60 ? `${chosenKernel.slice(0, 60)}…` : chosenKernel}`;
    note.title = chosenKernel;
  }
}

function chooseKernel(name) {
  chosenKernel = chosenKernel === name ? null : name;
  markKernel();
  const note = document.getElementById('chosen');
  if (note && chosenKernel === null) note.textContent = '';
}

/* --------------------------------------------------------- drill-down */

let drillGeneration = 0;

/* The dispatch drill-down for dispatch id (kernel name), below the
 * dispatch list: its values from /api/analysis with d=id, and a chart of
 * one metric over the kernel's dispatches. */
async function openDrill(s, dispatchId, kernel, anchor) {
  const mine = ++drillGeneration;
  let sec = document.getElementById('drill');
  if (!sec) {
    sec = el('section', 'panel drill');
    sec.id = 'drill';
    sec.setAttribute('aria-label', 'dispatch drill-down');
  }
  anchor.after(sec);
  sec.innerHTML = '';
  sec.dataset.state = 'loading';
  sec.dataset.dispatch = String(dispatchId);
  const h = el('h2', '', `Dispatch ${dispatchId}`);
  h.tabIndex = -1;
  sec.appendChild(h);
  sec.appendChild(el('p', 'kname', kernel));
  const close = el('button', 'close', 'Close');
  close.type = 'button';
  close.addEventListener('click', () => sec.remove());
  sec.appendChild(close);
  const sel = Object.assign({}, s);
  delete sel.base;
  delete sel.d;
  try {
    const report = await getJSON(`api/analysis?${query(Object.assign({}, sel, { d: String(dispatchId) }), false)}`);
    if (mine !== drillGeneration) return;
    const tables = [];
    for (const p of report.panels) for (const t of p.tables) {
      if (t.rows.some((r) => r.id.split('.').length === 3 && r.cells.some((v) => typeof v === 'number'))) tables.push(t);
    }
    const controls = el('div', 'pager');
    const tsel = el('select', 'drill-table');
    tsel.setAttribute('aria-label', 'table of this dispatch');
    for (const t of tables) {
      const o = el('option', '', `${t.id} ${t.title}`);
      o.value = t.id;
      tsel.appendChild(o);
    }
    const msel = el('select', 'drill-metric');
    msel.setAttribute('aria-label', 'metric to chart across the dispatches');
    const lt = el('label', '', 'Table ');
    lt.appendChild(tsel);
    const lm = el('label', '', 'Chart of ');
    lm.appendChild(msel);
    controls.append(lt, lm);
    sec.appendChild(controls);
    const chartBox = el('div', 'drill-chart');
    const holder = el('div', 'drill-values');
    sec.append(chartBox, holder);
    const showTable = () => {
      const t = tables.find((x) => x.id === tsel.value) || tables[0];
      if (!t) return;
      holder.innerHTML = '';
      const wrap = el('div', 'scroll');
      const table = el('table');
      table.dataset.drillTable = t.id;
      const head = el('tr');
      t.columns.forEach((c) => head.appendChild(el('th', '', c)));
      table.appendChild(head);
      msel.innerHTML = '';
      for (const row of t.rows) {
        const tr = el('tr');
        tr.dataset.row = row.id;
        row.cells.forEach((v) => {
          const td = el('td', typeof v === 'number' ? '' : 'text', fmt(v));
          if (typeof v === 'number') td.dataset.value = String(v);
          tr.appendChild(td);
        });
        if (row.cells.some((v) => typeof v === 'number')) {
          const o = el('option', '', String(row.cells[0]));
          o.value = row.id;
          msel.appendChild(o);
          activatable(tr, `chart ${row.cells[0]} across the dispatches`, () => {
            msel.value = row.id;
            chart();
          });
        }
        table.appendChild(tr);
      }
      wrap.appendChild(table);
      holder.appendChild(wrap);
      chart();
    };
    let chartGeneration = 0;
    const chart = async () => {
      const m = msel.value;
      if (!m) return;
      const g = ++chartGeneration;
      chartBox.innerHTML = '';
      chartBox.dataset.state = 'loading';
      const note = el('p', 'note', 'loading the metric over the dispatches…');
      chartBox.appendChild(note);
      try {
        const series = await getJSON(`api/series?${query(Object.assign({}, sel, { kn: [kernel] }), false)}&m=${encodeURIComponent(m)}`);
        if (g !== chartGeneration || mine !== drillGeneration) return;
        drawSeries(chartBox, note, series, dispatchId);
        chartBox.dataset.state = 'ready';
      } catch (e) {
        if (g !== chartGeneration) return;
        note.textContent = `chart: ${e.message}`;
        chartBox.dataset.state = 'error';
      }
    };
    tsel.addEventListener('change', showTable);
    msel.addEventListener('change', chart);
    tsel.value = tables.some((t) => t.id === '2.1') ? '2.1' : (tables[0] ? tables[0].id : '');
    showTable();
    sec.dataset.state = 'ready';
    h.focus();
  } catch (e) {
    if (mine !== drillGeneration) return;
    sec.appendChild(el('p', 'note error', `dispatch ${dispatchId}: ${e.message}`));
    sec.dataset.state = 'error';
  }
}

/* The chart of one metric over the dispatches (one point each, or the
 * server's even buckets with their min to max band), the drilled dispatch
 * marked. */
function drawSeries(box, note, series, dispatchId) {
  const unit = series.unit ? ` (${series.unit})` : '';
  box.dataset.points = String(series.points.length);
  box.dataset.downsampled = String(series.downsampled);
  note.textContent = series.downsampled
    ? `${series.name}${unit} over ${fmt(series.dispatches)} dispatches, downsampled: ${fmt(series.points.length)} ` +
      'even buckets, each drawn as its minimum to maximum and its mean'
    : `${series.name}${unit} over the kernel's ${fmt(series.dispatches)} dispatches`;
  const [div, canvas] = canvasBox(false);
  box.appendChild(div);
  const labels = series.points.map((p) => (series.downsampled ? `${p.d}–${p.last}` : String(p.d)));
  const datasets = [];
  if (series.downsampled) {
    datasets.push({ label: 'max', data: series.points.map((p) => p.max), borderColor: '#9db4e6', pointRadius: 0, fill: '+1',
      backgroundColor: 'rgba(47, 94, 184, 0.15)' });
    datasets.push({ label: 'min', data: series.points.map((p) => p.min), borderColor: '#9db4e6', pointRadius: 0 });
    datasets.push({ label: 'mean', data: series.points.map((p) => p.mean), borderColor: '#2f5eb8', pointRadius: 0 });
  } else {
    datasets.push({ label: series.name, data: series.points.map((p) => p.v), borderColor: '#2f5eb8',
      pointRadius: series.points.map((p) => (p.d === dispatchId ? 6 : 2)),
      pointBackgroundColor: series.points.map((p) => (p.d === dispatchId ? '#c0392b' : '#2f5eb8')) });
  }
  makeChart(canvas, {
    type: 'line',
    data: { labels, datasets },
    options: { plugins: { legend: { display: series.downsampled }, title: { display: true, text: `${series.name}${unit}` } },
      scales: { x: { title: { display: true, text: 'dispatch' } } } },
  });
}
