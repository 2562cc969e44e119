/*
 * ranks.js - the rank table of a multi-rank (MPI) workload: the "ranks"
 * object that /api/analysis carries when the selection holds two ranks or
 * more (docs/mpi.md). One section: the slowest and fastest rank and the
 * imbalance, a bar per rank of its total kernel time (the extremes in
 * their own colours), the table of every rank in a scrolling box (the
 * JSON holds every rank, so the page needs no server paging), and the
 * kernels whose time differs most between ranks.
 *
 * Loaded before app.js, whose helpers (el, cell, fmt, timeText,
 * canvasBox, makeChart) it calls only once the page runs.
 */
'use strict';

const RANK_COLOURS = { slowest: '#b3261e', fastest: '#1a7f37', other: '#2f5eb8' };

function rankTable(columns, rows) {
  const table = document.createElement('table');
  const head = document.createElement('tr');
  for (const c of columns) head.appendChild(el('th', c === 'Host' || c === 'Kernel' ? 'text' : '', c));
  table.appendChild(head);
  for (const r of rows) table.appendChild(r);
  return table;
}

/* The Ranks section for the report, or null when it has no rank table. */
function renderRanks(report) {
  const rk = report.ranks;
  if (!rk || !Array.isArray(rk.ranks)) return null;
  const sec = el('section', 'panel ranks');
  sec.id = 'panel-ranks';
  sec.appendChild(el('h2', '', `Ranks: ${rk.n_ranks} MPI ranks`));
  const slow = rk.ranks.find((r) => r.rank === rk.slowest);
  const fast = rk.ranks.find((r) => r.rank === rk.fastest);
  const facts = el('p', 'facts rank-facts');
  facts.dataset.slowest = String(rk.slowest);
  facts.dataset.fastest = String(rk.fastest);
  facts.textContent = `Slowest rank ${rk.slowest}${slow ? ` (${timeText(slow.kernel_time_ns)})` : ''}, ` +
    `fastest rank ${rk.fastest}${fast ? ` (${timeText(fast.kernel_time_ns)})` : ''}; imbalance (max / mean ` +
    `kernel time) ${rk.imbalance === null ? 'n/a' : fmt(rk.imbalance)}`;
  sec.appendChild(facts);

  /* One bar per rank: total kernel time. */
  const [div, canvas] = canvasBox(rk.ranks.length > 16);
  div.id = 'rank-chart';
  const colour = (r) => (r.rank === rk.slowest ? RANK_COLOURS.slowest : r.rank === rk.fastest ? RANK_COLOURS.fastest
    : RANK_COLOURS.other);
  makeChart(canvas, {
    type: 'bar',
    data: {
      labels: rk.ranks.map((r) => `rank ${r.rank}${r.rank === rk.slowest ? ' (slowest)' : r.rank === rk.fastest ? ' (fastest)' : ''}`),
      datasets: [{ label: 'kernel time (ns)', data: rk.ranks.map((r) => r.kernel_time_ns), backgroundColor: rk.ranks.map(colour) }],
    },
    options: { plugins: { legend: { display: false }, title: { display: true, text: 'Total kernel time per rank (ns)' } } },
  });
  sec.appendChild(div);

  /* Every rank, in a box that scrolls when there are hundreds. */
  const box = el('div', 'tablebox');
  box.id = 'table-ranks';
  box.dataset.table = 'ranks';
  box.appendChild(el('h3', '', 'Per rank'));
  const rows = rk.ranks.map((r) => {
    const tr = document.createElement('tr');
    tr.dataset.row = String(r.rank);
    if (r.rank === rk.slowest) tr.classList.add('slowest');
    if (r.rank === rk.fastest) tr.classList.add('fastest');
    for (const v of [r.rank, r.host, r.dispatches, r.kernel_time_ns, r.mean_ns, r.busy_cycles, r.waves]) cell(tr, v);
    return tr;
  });
  const wrap = el('div', 'scroll rank-scroll');
  wrap.appendChild(rankTable(['Rank', 'Host', 'Dispatches', 'Kernel time (ns)', 'Mean (ns)', 'Busy cycles', 'Waves'], rows));
  box.appendChild(wrap);
  sec.appendChild(box);

  /* The kernels whose per-rank time differs most. */
  if (Array.isArray(rk.kernels) && rk.kernels.length) {
    const kb = el('div', 'tablebox');
    kb.id = 'table-rank-kernels';
    kb.dataset.table = 'rank-kernels';
    kb.appendChild(el('h3', '', 'Kernels that differ most between ranks'));
    kb.appendChild(el('p', 'note', 'Ratio: the kernel\'s slowest rank\'s time over its fastest rank\'s.'));
    const krows = rk.kernels.map((k, i) => {
      const tr = document.createElement('tr');
      tr.dataset.row = String(i);
      for (const v of [k.name, k.ranks, k.ratio, k.max_rank, k.max_ns, k.min_rank, k.min_ns]) cell(tr, v);
      return tr;
    });
    const kw = el('div', 'scroll');
    kw.appendChild(rankTable(['Kernel', 'Ranks', 'Ratio', 'Slowest rank', 'Its time (ns)', 'Fastest rank',
      'Its time (ns)'], krows));
    kb.appendChild(kw);
    sec.appendChild(kb);
  }
  return sec;
}

/* For tests and the console: the rank chart's bars as drawn, or null
 * before Chart.js has made it. */
window.lumenRankChart = () => {
  const canvas = document.querySelector('#rank-chart canvas');
  const c = canvas && window.Chart ? window.Chart.getChart(canvas) : null;
  if (!c) return null;
  const ds = c.data.datasets[0];
  const slow = c.data.labels.findIndex((l) => l.includes('slowest'));
  return { bars: c.getDatasetMeta(0).data.length, values: ds.data.slice(), slowLabel: slow >= 0 ? c.data.labels[slow] : '' };
};
