// gui.test.mjs - the web GUI in a real browser (Playwright driving Debian's
// Chromium, headless): open it, pick a workload, filter to one kernel,
// switch the normalization, add a baseline, and check the numbers on the
// page against `lumen analyze --format json` for the same selection, and
// what the charts and the summary draw against the server's JSON (every
// bar labelled, the roofline's points, ceilings and hover, kernel names
// shortened but distinct, the baseline beside each change, the summary's
// warnings, what a Radeon chip cannot measure, an NVIDIA kernel placed at
// DRAM from part of its arithmetic, rules not evaluated). Saves
// screenshots of the main views.
//
// Usage: node gui.test.mjs URL LUMEN SHARED_DIR SCREENSHOT_DIR
// (RDNA_DIR in the environment: the gfx1100 folder the server shows)
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';

const [url, lumen, shared, shots] = process.argv.slice(2);
const WL = `${shared}/workloads`;
const NCU = `${shared}/formats/ncu/cc86_metrics`;
mkdirSync(shots, { recursive: true });
const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
};

function cli(...args) {
  const out = execFileSync(lumen, ['analyze', ...args, '--format', 'json'], { maxBuffer: 64 << 20 });
  return JSON.parse(out.toString());
}

function cliTable(report, id) {
  for (const p of report.panels) for (const t of p.tables) if (t.id === id) return t;
  return null;
}

// Numbers of a table as shown: row id -> [data-value of each numeric cell].
async function pageTable(page, id) {
  return page.$$eval(`[data-table="${id}"] tr[data-row]`, (rows) =>
    rows.map((r) => ({
      id: r.dataset.row,
      values: Array.from(r.querySelectorAll('td'))
        .filter((td) => !td.classList.contains('delta'))
        .map((td) => (td.dataset.value === undefined ? null : Number(td.dataset.value))),
      deltas: Array.from(r.querySelectorAll('td.delta')).map((td) =>
        td.dataset.value === undefined ? null : Number(td.dataset.value)),
    })));
}

function near(a, b) {
  if (a === null || b === null) return a === b;
  if (a === b) return true;
  return Math.abs(a - b) <= 1e-12 * Math.max(Math.abs(a), Math.abs(b));
}

// Compare a table on the page with the CLI's: the shown run's numbers
// (the compared run when there is a baseline) and the deltas.
async function compareTable(page, report, id, label) {
  const t = cliTable(report, id);
  const shown = await pageTable(page, id);
  if (!t) return check(false, `${label}: no table ${id} in the CLI output`);
  check(shown.length === t.rows.length, `${label}: table ${id} has ${t.rows.length} rows (page: ${shown.length})`);
  let same = true;
  let compared = 0;
  // The page adds a Δ% column after every column that is numeric in some
  // row of the baseline.
  const numericCols = new Set();
  t.rows.forEach((row) => row.cells.forEach((v, k) => { if (k > 0 && typeof v === 'number') numericCols.add(k); }));
  t.rows.forEach((row, i) => {
    const cells = row.compare && row.compare[0] ? row.compare[0].cells : row.cells;
    const want = cells.map((v) => (typeof v === 'number' ? v : null));
    const got = shown[i] ? shown[i].values : [];
    want.forEach((v, k) => {
      if (v === null) return;
      compared++;
      if (!near(v, got[k])) {
        same = false;
        console.log(`   ${id} row ${row.id} col ${k}: CLI ${v}, page ${got[k]}`);
      }
    });
    if (row.compare && row.compare[0]) {
      const wantD = row.compare[0].delta_pct.filter((_, k) => numericCols.has(k));
      const gotD = shown[i] ? shown[i].deltas : [];
      wantD.forEach((v, k) => {
        compared++;
        if (!near(v === undefined ? null : v, gotD[k] === undefined ? null : gotD[k])) {
          same = false;
          console.log(`   ${id} row ${row.id} delta ${k}: CLI ${v}, page ${gotD[k]}`);
        }
      });
    }
  });
  check(same && compared > 0, `${label}: table ${id} equals the CLI (${compared} numbers)`);
}

// A shown name is the full name or a shortening of it: every run of text
// between two "…" is in the full name, in order.
function shortens(shown, full) {
  if (shown === full) return true;
  if (!shown.includes('…')) return false;
  let at = 0;
  for (const piece of shown.split('…')) {
    const i = full.indexOf(piece, at);
    if (i < 0) return false;
    at = i + piece.length;
  }
  return true;
}

// The numbers in a line of text ("73,914.63 GFLOP/s at 30.95" -> [73914.63, 30.95]).
const numbersIn = (text) => (text.match(/-?\d[\d,]*(\.\d+)?(e[-+]?\d+)?/gi) || []).map((n) => Number(n.replace(/,/g, '')));
// A number as shown (two decimals, or three digits in exponent form) is v.
const about = (shown, v, text = '') => Math.abs(shown - v) <= (/\de/i.test(text) ? 0.006 * Math.abs(v) : 0.006);

// The horizontal bar chart of table id: every bar labelled (the y axis
// shows as many tick labels as the table has rows, in its order, spaced
// at least a line apart).
async function checkBarLabels(page, report, id, label) {
  const t = cliTable(report, id);
  try {
    await page.waitForFunction((i) => {
      const c = document.querySelector(`[data-table="${i}"] canvas`);
      return c && window.Chart && window.Chart.getChart(c);
    }, id, { timeout: 10000 });
  } catch (e) {
    return check(false, `${label}: table ${id} has a chart`);
  }
  const got = await page.evaluate((i) => {
    const chart = window.Chart.getChart(document.querySelector(`[data-table="${i}"] canvas`));
    const y = chart.scales.y;
    const font = Object.assign({}, window.Chart.defaults.font, y.options.ticks.font || {});
    const px = y.ticks.map((_, k) => y.getPixelForTick(k));
    return {
      shown: y.ticks.map((tk) => chart.data.labels[tk.value]),
      gap: Math.min(...px.slice(1).map((v, k) => Math.abs(v - px[k]))),
      line: font.size * (typeof font.lineHeight === 'number' ? font.lineHeight : 1.2),
      display: y.options.ticks.display !== false,
    };
  }, id);
  const want = t.rows.map((r) => String(r.cells[0]));
  check(got.display && JSON.stringify(got.shown) === JSON.stringify(want),
    `${label}: the ${id} chart labels all ${want.length} bars (shown ${got.shown.length}: ${got.shown.slice(0, 3).join(', ')}…)`);
  check(got.gap >= got.line, `${label}: the ${id} bar labels are ${got.gap.toFixed(1)} px apart, a line is ${got.line.toFixed(1)} px`);
}

// Kernel names shown in the summary's cards and the tables' kernel cells:
// shortened, the whole name in the title, two kernels never alike.
async function checkNames(page, label) {
  const shown = await page.evaluate(() => {
    const out = [];
    document.querySelectorAll('#panel-summary .card').forEach((c) => {
      const h = c.querySelector('h3.kname');
      out.push({ where: 'card', full: c.dataset.kernel, title: h.title, text: h.textContent.replace(/^\d+\. /, '') });
    });
    document.querySelectorAll('table[data-kernel-col]').forEach((table) => {
      const where = table.closest('[data-table]').dataset.table;
      table.querySelectorAll('tr[data-row]').forEach((tr) => {
        const td = tr.children[Number(table.dataset.kernelCol)];
        if (td && td.dataset.text) out.push({ where, full: td.dataset.text, title: td.title, text: td.textContent });
      });
    });
    return out;
  });
  const bad = shown.filter((n) => n.title !== n.full || !shortens(n.text, n.full));
  check(shown.length > 0 && bad.length === 0, `${label}: ${shown.length} kernel names shown as shortenings of the name in ` +
    `their title${bad.length ? ` (not: ${bad.slice(0, 2).map((b) => `${b.where} "${b.text}"`).join(', ')})` : ''}`);
  const long = shown.filter((n) => [...n.full].length > 100);
  const clash = [];
  for (const where of new Set(shown.map((n) => n.where))) {
    const seen = new Map();
    for (const n of shown.filter((x) => x.where === where)) {
      if (seen.has(n.text) && seen.get(n.text) !== n.full) clash.push(`${where}: "${n.text}"`);
      seen.set(n.text, n.full);
    }
  }
  check(long.length > 0 && long.every((n) => [...n.text].length <= 100 && n.text !== n.full) && clash.length === 0,
    `${label}: the ${long.length} names over 100 characters are shortened, and different kernels have different shown ` +
    `names ${clash.slice(0, 2).join(', ')}`);
}

// A comparison's Δ% cells show the baseline's value beside the change.
async function checkBaseValues(page, report, id, label) {
  const t = cliTable(report, id);
  const shown = await page.$$eval(`[data-table="${id}"] tr[data-row]`, (rows) => rows.map((r) =>
    Array.from(r.querySelectorAll('td.delta')).map((td) => {
      const b = td.querySelector('.base');
      const box = b ? b.getBoundingClientRect() : null;
      return b ? { text: b.textContent, value: b.dataset.value === undefined ? null : Number(b.dataset.value),
        visible: box.width > 0 && box.height > 0 } : null;
    })));
  const numericCols = [];
  t.rows.forEach((row) => row.cells.forEach((v, k) => { if (k > 0 && typeof v === 'number' && !numericCols.includes(k)) numericCols.push(k); }));
  numericCols.sort((a, b) => a - b);
  let n = 0, wrong = [];
  t.rows.forEach((row, i) => numericCols.forEach((k, j) => {
    const b = shown[i] && shown[i][j];
    const v = row.cells[k];
    n++;
    const ok = b && b.visible && b.text.startsWith('base ') &&
      (typeof v === 'number' ? b.value !== null && near(b.value, v) && about(numbersIn(b.text)[0], v, b.text) : b.value === null);
    if (!ok && wrong.length < 3) wrong.push(`row ${row.id} col ${k}: baseline ${v}, shown ${b ? b.text : 'nothing'}`);
  }));
  check(n > 0 && wrong.length === 0, `${label}: each of the ${n} Δ% cells of ${id} shows the baseline's value ${wrong.join('; ')}`);
}

// The roofline against /api/roofline: one point per kernel with FLOPs and
// HBM bytes (at its HBM intensity), the others listed as not placed; a
// line for each ceiling present, labelled with its type and value; memory
// lines up to the highest compute ceiling, compute lines from their ridge
// at HBM; nothing outside the axes; the hover of each point.
async function checkRoofline(page, w, label) {
  try {
    await page.waitForFunction(() => window.lumenRoofline && window.lumenRoofline(), null, { timeout: 15000 });
  } catch (e) {
    return check(false, `${label}: the roofline is drawn (window.lumenRoofline)`);
  }
  const r = await page.evaluate(async (id) => (await fetch(`api/roofline?w=${id}`)).json(), w);
  const drawn = await page.evaluate(() => window.lumenRoofline());
  const box = await page.$eval('#roofline', (e) => ({
    points: Number(e.dataset.points),
    unplaced: Array.from(e.querySelectorAll('.roof-unplaced [data-kernel]')).map((x) => x.dataset.kernel),
  }));
  const pos = (v) => typeof v === 'number' && v > 0;
  const placed = r.points.filter((p) => pos(p.gflops_per_s) && pos(p.ai.HBM));
  check(drawn.points.length === placed.length && box.points === placed.length &&
    placed.every((p) => drawn.points.filter((d) => d.kernel === p.kernel && d.x === p.ai.HBM && d.y === p.gflops_per_s).length === 1),
    `${label}: one point per kernel with FLOPs at its HBM intensity (${placed.length} of ${r.points.length}; drawn ${drawn.points.length})`);
  const others = r.points.filter((p) => !placed.includes(p)).map((p) => p.kernel);
  check(JSON.stringify(box.unplaced) === JSON.stringify(others),
    `${label}: the ${others.length} kernels without a point are listed as not placed (${box.unplaced.length})`);
  const names = { FP32: 'FP32', FP64: 'FP64', MFMA_BF16: 'MFMA BF16', MFMA_F16: 'MFMA F16', MFMA_F32: 'MFMA F32',
    MFMA_F64: 'MFMA F64', MFMA_I8: 'MFMA I8', HBM: 'HBM', L2: 'L2', L1: 'L1', LDS: 'LDS' };
  const present = Object.keys(names).filter((k) => pos(r.ceilings[k]));
  const compute = present.filter((k) => !['HBM', 'L2', 'L1', 'LDS'].includes(k));
  const top = Math.max(...compute.map((k) => r.ceilings[k]));
  const canvas = await page.$eval('#roofline canvas', (c) => ({ w: c.clientWidth, h: c.clientHeight }));
  const bad = [];
  for (const k of present) {
    const c = drawn.ceilings.filter((x) => x.key === k);
    const text = c.length === 1 ? c[0].label : '';
    const value = numbersIn(text.slice(names[k].length))[0];
    const lab = drawn.labels.filter((l) => l.key === k && l.text === text);
    const memory = ['HBM', 'L2', 'L1', 'LDS'].includes(k);
    const [p0, p1] = c.length === 1 ? c[0].data : [{}, {}];
    if (c.length !== 1 || !text.startsWith(`${names[k]} `) || Math.abs(value - r.ceilings[k]) > 0.5) bad.push(`${k}: line "${text}"`);
    else if (lab.length !== 1 || lab[0].left < 0 || lab[0].top < 0 || lab[0].right > canvas.w || lab[0].bottom > canvas.h)
      bad.push(`${k}: label ${JSON.stringify(lab)}`);
    else if (memory && compute.length && !near(p1.y, top)) bad.push(`${k}: ends at ${p1.y}, not at ${top}`);
    else if (!memory && pos(r.ceilings.HBM) && !near(p0.x, r.ceilings[k] / r.ceilings.HBM)) bad.push(`${k}: starts at ${p0.x}`);
  }
  check(present.length > 0 && bad.length === 0 && drawn.ceilings.length === present.length,
    `${label}: a labelled line for each of the ${present.length} ceilings (${present.join(', ')}) ${bad.join('; ')}`);
  const cl = drawn.labels.filter((l) => compute.includes(l.key));
  const overlapping = cl.filter((a, i) => cl.some((b, j) => j > i && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom));
  check(overlapping.length === 0, `${label}: no compute ceiling's label covers another (${cl.length})`);
  const highest = Math.max(...present.map((k) => r.ceilings[k] * (['HBM', 'L2', 'L1', 'LDS'].includes(k) ? 0 : 1)), ...placed.map((p) => p.gflops_per_s));
  const xs = placed.map((p) => p.ai.HBM);
  check(drawn.y.max >= highest && drawn.x.min <= Math.min(...xs, Infinity) && drawn.x.max >= Math.max(...xs, 0) &&
    drawn.ceilings.every((c) => c.data.every((d) => d.x >= drawn.x.min && d.x <= drawn.x.max && d.y >= drawn.y.min && d.y <= drawn.y.max)),
    `${label}: nothing clipped (y up to ${drawn.y.max.toPrecision(4)} >= ${highest.toPrecision(4)}; x ${drawn.x.min}..${drawn.x.max})`);
  // Hover each point: its kernel, GFLOP/s and intensities.
  const rect = await page.$eval('#roofline canvas', (c) => {
    c.scrollIntoView({ block: 'center' });
    const b = c.getBoundingClientRect();
    return { x: b.x, y: b.y };
  });
  for (const p of placed) {
    const d = drawn.points.find((x) => x.kernel === p.kernel);
    await page.mouse.move(rect.x + d.px, rect.y + d.py);
    let tip = null;
    try {
      await page.waitForFunction(() => window.lumenRoofline().tooltip, null, { timeout: 3000 });
      tip = await page.evaluate(() => window.lumenRoofline().tooltip);
    } catch (e) { /* no hover */ }
    const title = tip ? tip.title.join(' ').replace(/^\d+\. /, '') : '';
    const lines = tip ? tip.lines : [];
    const has = (re, v) => lines.some((l) => re.test(l) && about(numbersIn(l)[0], v, l));
    const ok = tip && shortens(title, p.kernel) && has(/GFLOP\/s/, p.gflops_per_s) && has(/at HBM/, p.ai.HBM) &&
      (!pos(p.ai.L2) || has(/at L2/, p.ai.L2)) && (!pos(p.ai.L1) || has(/at L1/, p.ai.L1));
    check(ok, `${label}: the hover of ${p.kernel.slice(0, 40)}… names it with its GFLOP/s and intensities (${title.slice(0, 40)}: ${lines.join(' | ')})`);
  }
  await page.mouse.move(0, 0);
}

// The summary's cards against /api/summary (or `want`, the CLI's
// summary of the same workload): the implausible sysinfo fields, each
// limiter's bar with what it limits, the metrics above their peak in
// their own line (never bars), the roofline's type, limit, verdict, place
// (GFLOP/s, intensity at which memory) and the arithmetic it counts, the
// rules that could not be evaluated, and each finding's evidence and
// explanation, all visible.
async function checkSummary(page, w, label, want = null) {
  await page.waitForSelector('#panel-summary');
  const sum = want || (await page.evaluate(async (id) => (await fetch(`api/summary?w=${id}`)).json(), w)).summary;
  const got = await page.evaluate(() => {
    const visible = (e) => { if (!e) return false; const b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0; };
    return {
      implausible: Array.from(document.querySelectorAll('#panel-summary .implausible li[data-field]')).map((li) =>
        ({ field: li.dataset.field, text: li.textContent, visible: visible(li) })),
      cards: Array.from(document.querySelectorAll('#panel-summary .card')).map((c) => ({
        kernel: c.dataset.kernel,
        bars: Array.from(c.querySelectorAll('.bar')).map((b) => ({ metric: b.dataset.metric, limits: (b.querySelector('.limits') || {}).textContent,
          width: parseFloat(b.querySelector('.fill').style.width) })),
        above: Array.from(c.querySelectorAll('.above-peak [data-metric]')).map((x) => ({ metric: x.dataset.metric, pct: Number(x.dataset.pct),
          visible: visible(x) })),
        roof: { text: c.querySelector('p.roof').textContent, ...c.querySelector('p.roof').dataset },
        unknown: Array.from(c.querySelectorAll('li.finding.unknown')).map((li) => ({ text: li.textContent, ...li.dataset,
          visible: visible(li) })),
        none: Array.from(c.querySelectorAll('li.finding.none')).map((li) => li.textContent),
        findings: Array.from(c.querySelectorAll('li.finding[data-rule]')).map((li) => ({
          rule: li.dataset.rule,
          evidence: Array.from(li.querySelectorAll('.evidence [data-metric]')).map((x) => ({ metric: x.dataset.metric,
            value: x.dataset.value === undefined ? null : Number(x.dataset.value), visible: visible(x) })),
          explain: li.querySelector('.explain') ? li.querySelector('.explain').textContent : '',
          explainVisible: visible(li.querySelector('.explain')),
        })),
      })),
    };
  });
  const imp = sum.implausible_sysinfo;
  if (!imp.length) {
    if (got.implausible.length) check(false, `${label}: no implausible sysinfo field is warned of (${got.implausible.length} are)`);
  } else check(got.implausible.length === imp.length && imp.every((b, i) => {
    const g = got.implausible[i];
    return g && g.visible && g.field === b.field && g.text.includes(b.value) && g.text.includes(b.why) &&
      (b.expected === null || g.text.includes(b.expected.toLocaleString('en-US')));
  }), `${label}: the summary warns of each of the ${imp.length} implausible sysinfo fields with value, expected and why ` +
    `(${got.implausible.map((g) => g.field).join(', ')})`);
  check(got.cards.length === sum.kernels.length && sum.kernels.every((k, i) => got.cards[i].kernel === k.name),
    `${label}: a card for each of the ${sum.kernels.length} kernels, in order (${got.cards.length})`);
  sum.kernels.forEach((k, i) => {
    const c = got.cards[i] || { bars: [], above: [], roof: { text: '' }, unknown: [], none: [], findings: [] };
    const n = `${label}: card ${i + 1}`;
    check(c.bars.length === k.highlights.length && k.highlights.every((h, j) => c.bars[j].metric === h.metric && c.bars[j].limits === h.limits) &&
      c.above.length === k.above_peak.length && k.above_peak.every((h, j) => c.above[j].metric === h.metric && c.above[j].visible &&
      near(c.above[j].pct, h.pct)) && !c.bars.some((b) => k.above_peak.some((h) => h.metric === b.metric) || b.width > 100),
    `${n} has a bar for each of its ${k.highlights.length} limiters, saying what each limits, and lists its ` +
    `${k.above_peak.length} metrics above peak apart from the bars`);
    const r = k.roofline;
    // A kernel placed from part of its arithmetic says so last.
    const partial = r.ops_not_collected ? `; counting only the arithmetic collected (${r.ops_not_collected} and others were not)` : '';
    const roofText = partial && c.roof.text.endsWith(partial) ? c.roof.text.slice(0, -partial.length) : c.roof.text;
    const roofOk = r.pct_of_attainable === null ? c.roof.text.includes(r.not_placed)
      : c.roof.type === r.type && c.roof.text.includes(r.type) &&
        (typeof r.ceiling_gflops !== 'number' || numbersIn(c.roof.text).some((v) => about(v, r.ceiling_gflops))) && (r.above_attainable
        ? c.roof.aboveAttainable === 'true' && /no bound/.test(c.roof.text) && !/-bound/.test(c.roof.text) && c.roof.limit === undefined
        : !r.bound ? c.roof.limit === undefined && !/-bound/.test(c.roof.text)
          : c.roof.limit === r.limit && c.roof.text.includes(`-bound`) && roofText.endsWith(` ${r.limit}`));
    // (A kernel not placed reads as before: only a failure is said.)
    if (r.pct_of_attainable !== null || !roofOk) {
      check(roofOk, `${n}'s roofline line says ${r.type || 'not placed'}${r.limit ? `, ${r.limit}` : ''}, its ceiling ` +
        `${r.ceiling_gflops}${r.above_attainable ? ', above the attainable: no bound' : ''} (${c.roof.text})`);
    }
    // Where it is placed: its GFLOP/s at its intensity at the device's
    // memory (HBM, or DRAM for NVIDIA), and the part of the arithmetic
    // counted.
    if (r.pct_of_attainable !== null) {
      const mem = r.memory || 'HBM';
      const other = mem === 'HBM' ? 'DRAM' : 'HBM';
      const shown = numbersIn(c.roof.text);
      check(c.roof.text.includes(` FLOP/byte at ${mem}, `) && !c.roof.text.includes(other) &&
        shown.some((v) => about(v, r.intensity, c.roof.text)) && shown.some((v) => about(v, r.gflops, c.roof.text)) &&
        (typeof r.ceiling_hbm_gbs !== 'number' || numbersIn((c.roof.text.match(new RegExp(`${mem} [-\\d.,e+]+ GB/s`, 'i')) || [''])[0])
          .some((v) => about(v, r.ceiling_hbm_gbs, c.roof.text))) &&
        (partial ? c.roof.text.endsWith(partial) : !c.roof.text.includes('counting only')),
      `${n}'s roofline line places it at ${r.intensity} FLOP/byte at ${mem}, ${r.gflops} GFLOP/s` +
        `${partial ? `, counting only the arithmetic collected (not ${r.ops_not_collected})` : ''} (${c.roof.text})`);
    }
    // Rules that could not be evaluated are counted against those applied;
    // "no rule fired" is said only of a kernel every rule examined.
    if (k.rules_not_evaluated) {
      const u = c.unknown[0] || {};
      const head = `${k.findings.length ? '' : 'No rule fired; '}${k.rules_not_evaluated} of ${k.rules_applied} rules could not be evaluated`;
      check(c.unknown.length === 1 && u.visible && Number(u.rules) === k.rules_not_evaluated && Number(u.of) === k.rules_applied &&
        u.text.startsWith(head) && u.text.includes(`(${k.rules_not_evaluated_metric}`) && c.none.length === 0,
      `${n} says ${k.rules_not_evaluated} of its ${k.rules_applied} rules could not be evaluated, not that no rule fired ` +
        `(${c.unknown.map((x) => x.text).concat(c.none).join(' | ')})`);
    } else {
      check(c.unknown.length === 0 && c.none.length === (k.findings.length ? 0 : 1),
        `${n} says no rule fired only when none did (${c.none.join(' | ')})`);
    }
    const fOk = k.findings.every((f, j) => {
      const g = c.findings[j];
      return g && g.rule === f.rule && g.explainVisible && g.explain.includes(f.explain) && g.evidence.length === f.evidence.length &&
        f.evidence.every((e, m) => g.evidence[m].metric === e.metric && g.evidence[m].visible &&
          (e.value === null ? g.evidence[m].value === null : near(g.evidence[m].value, e.value)));
    });
    check(fOk && c.findings.length === k.findings.length, `${n} shows each of its ${k.findings.length} findings' evidence and explanation`);
  });
}

async function go(page, hash) {
  await page.evaluate((h) => { document.body.dataset.state = 'loading'; location.hash = h; }, hash);
  await ready(page);
}

async function ready(page) {
  await page.waitForFunction(() => document.body.dataset.state === 'ready' || document.body.dataset.state === 'error',
    null, { timeout: 60000 });
  const state = await page.evaluate(() => document.body.dataset.state);
  if (state !== 'ready') throw new Error(`the page says: ${await page.textContent('#status')}`);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-dev-shm-usage', '--disable-gpu'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });

  // 1. Open: the first workload is shown.
  await page.goto(url);
  await ready(page);
  const options = await page.$$eval('#workload option', (os) => os.map((o) => ({ value: o.value, text: o.textContent })));
  check(options.length >= 3, `the workload list has folders and the store (${options.map((o) => o.text).join(', ')})`);

  // 2. Pick the multi-kernel workload.
  const mix = options.find((o) => o.text === '_mix/mix_MI200');
  await page.selectOption('#workload', mix.value);
  await ready(page);
  await page.waitForTimeout(300);
  await page.screenshot({ path: `${shots}/01-overview.png` });
  await compareTable(page, cli('-w', `${WL}/_mix/mix_MI200`), '2.1', 'mix_MI200');
  await compareTable(page, cli('-w', `${WL}/_mix/mix_MI200`), '0.1', 'mix_MI200 top kernels');
  await checkBarLabels(page, cli('-w', `${WL}/_mix/mix_MI200`), '2.1', 'mix_MI200');
  const sol = await page.$('[data-table="2.1"]');
  await sol.screenshot({ path: `${shots}/02-speed-of-light.png` });

  // 2b. The summary: one card per top kernel, the same kernels and the
  // same verdicts as `lumen analyze --summary --format json`.
  await page.waitForSelector('#panel-summary .card');
  const cards = await page.$$eval('#panel-summary .card', (cs) => cs.map((c) => ({
    kernel: c.dataset.kernel,
    verdicts: Array.from(c.querySelectorAll('li.finding summary')).map((s) => s.textContent),
    bars: c.querySelectorAll('.bar').length,
  })));
  const cliSummary = JSON.parse(execFileSync(lumen, ['analyze', '-w', `${WL}/_mix/mix_MI200`, '--summary', '--format', 'json'],
    { maxBuffer: 64 << 20 })).summary;
  check(cards.length === cliSummary.kernels.length, `summary cards ${cards.length}, CLI kernels ${cliSummary.kernels.length}`);
  cliSummary.kernels.forEach((k, i) => {
    const card = cards[i] || { verdicts: [] };
    check(card.kernel === k.name, `summary card ${i + 1} is ${k.name}`);
    check(card.bars === k.highlights.length, `summary card ${i + 1} has ${k.highlights.length} labelled bars`);
    k.findings.forEach((f, j) => check((card.verdicts[j] || '').includes(f.verdict), `card ${i + 1} verdict ${f.verdict}`));
  });
  await checkSummary(page, mix.value, 'mix_MI200');
  await checkNames(page, 'mix_MI200');
  const summaryFirst = await page.$eval('#content', (m) => m.firstElementChild && m.firstElementChild.id);
  check(summaryFirst === 'panel-summary', 'the summary is the first panel');
  await (await page.$('#panel-summary')).screenshot({ path: `${shots}/00-summary.png` });

  // 3. Filter to one kernel (the list of exact names).
  const kernel = 'void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>) [clone .kd]';
  await page.selectOption('#klist', [kernel]);
  await ready(page);
  const exact = `^\\Q${kernel}\\E$`;
  await compareTable(page, cli('-w', `${WL}/_mix/mix_MI200`, '-k', exact), '2.1', 'one kernel');
  await compareTable(page, cli('-w', `${WL}/_mix/mix_MI200`, '-k', exact), '10.1', 'one kernel, instruction mix');
  const status = await page.textContent('#status');
  check(status.startsWith('8 of 40 dispatches'), `the status counts the kernel's dispatches (${status})`);
  const mixChart = await page.$('[data-table="10.1"]');
  await mixChart.screenshot({ path: `${shots}/03-instruction-mix.png` });

  // 4. Switch the normalization.
  await page.selectOption('#norm', 'per_kernel');
  await ready(page);
  await compareTable(page, cli('-w', `${WL}/_mix/mix_MI200`, '-k', exact, '--norm', 'per_kernel'), '2.1', 'per_kernel');
  await compareTable(page, cli('-w', `${WL}/_mix/mix_MI200`, '-k', exact, '--norm', 'per_kernel'), '17.2', 'per_kernel L2');

  // 5. The memory chart and the roofline.
  await page.selectOption('#klist', []);
  await ready(page);
  const mem = await page.$('[data-table="3.1"] svg.memchart');
  check(mem !== null, 'the memory chart is drawn');
  const memValues = await page.$$eval('[data-table="3.1"] svg text[data-value]', (ts) =>
    Object.fromEntries(ts.map((t) => [t.dataset.metric, Number(t.dataset.value)])));
  const memCli = cliTable(cli('-w', `${WL}/_mix/mix_MI200`, '--norm', 'per_kernel'), '3.1');
  const l2hit = memCli.rows.find((r) => r.cells[0] === 'L2 Hit').cells[1];
  check(near(memValues['L2 Hit'], l2hit), `the memory chart shows L2 Hit = ${l2hit} (page ${memValues['L2 Hit']})`);
  await (await page.$('[data-table="3.1"]')).screenshot({ path: `${shots}/04-memory-chart.png` });
  await page.waitForFunction(() => {
    const r = document.getElementById('roofline');
    return r && r.dataset.points !== undefined;
  }, null, { timeout: 30000 });
  await checkRoofline(page, mix.value, 'mix_MI200');
  await page.waitForTimeout(300);
  await (await page.$('[data-table="4.1"]')).screenshot({ path: `${shots}/05-roofline.png` });
  await (await page.$('[data-table="18.4"]')).screenshot({ path: `${shots}/06-l2-per-channel.png` });

  // 6. Add a baseline: Δ% columns, the compared run's numbers.
  const vcopy = options.find((o) => o.text === 'vcopy/MI200');
  await page.selectOption('#baseline', vcopy.value);
  await ready(page);
  const cmpCli = cli('-w', `${WL}/vcopy/MI200`, '-w', `${WL}/_mix/mix_MI200`, '--norm', 'per_kernel');
  await compareTable(page, cmpCli, '2.1', 'against a baseline');
  await compareTable(page, cmpCli, '11.2', 'against a baseline, pipeline');
  await checkBaseValues(page, cmpCli, '2.1', 'against a baseline');
  await checkBaseValues(page, cmpCli, '11.2', 'against a baseline, pipeline');
  await checkBarLabels(page, cmpCli, '2.1', 'against a baseline');
  const deltaCols = await page.$$eval('[data-table="2.1"] th', (ths) => ths.filter((t) => t.textContent === 'Δ%').length);
  check(deltaCols >= 2, `Δ% columns are shown (${deltaCols})`);
  const colored = await page.$$eval('[data-table="2.1"] td.delta.up, [data-table="2.1"] td.delta.down', (t) => t.length);
  check(colored > 0, `changes are coloured (${colored} cells)`);
  await page.evaluate(() => document.getElementById('panel-2').scrollIntoView());
  await page.waitForTimeout(300);
  await page.screenshot({ path: `${shots}/07-comparison.png` });

  // 7. The URL is the view: a new page opened on it shows the same.
  const shared = page.url();
  check(shared.includes('base=') && shared.includes('norm=per_kernel'), `the URL encodes the selection (${shared})`);
  const again = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await again.goto(shared);
  await ready(again);
  await compareTable(again, cmpCli, '2.1', 'a shared link');

  // 8. A store workload (kept analysis).
  const stored = options.find((o) => o.text.includes('(store'));
  const ranked = options.find((o) => o.value === 'db:ranked');
  check(ranked && ranked.text === 'ranked (store, 3 ranks on 2 hosts)' && !stored.text.includes('rank'),
    `the workload menu counts a store workload's ranks and hosts (${ranked && ranked.text}; ${stored.text})`);
  await page.selectOption('#baseline', '');
  await ready(page);
  await page.selectOption('#workload', stored.value);
  await ready(page);
  await compareTable(page, cli('-w', `${WL}/_mix/mix_MI300X_A1`), '2.1', 'a store workload');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `${shots}/08-store-workload.png` });

  // 8b. Time weighting.
  await page.selectOption('#weight', 'time');
  await ready(page);
  await compareTable(page, cli('-w', `${WL}/_mix/mix_MI300X_A1`, '--weight', 'time'), '7.1', 'time weighting');

  // 8c. A roofline with points and every compute ceiling (bmm1 on an
  // MI300X, whose architecture has no roofline panel), and its summary.
  const bmm = options.find((o) => o.text === 'rocprofiler-compute/bmm1_3.3.0_MI300X');
  await go(page, `w=${bmm.value}`);
  await checkRoofline(page, bmm.value, 'bmm1');
  await checkSummary(page, bmm.value, 'bmm1');
  const roofSection = await page.$('#panel-roofline');
  if (roofSection) await roofSection.screenshot({ path: `${shots}/09-roofline-mfma.png` });

  // 8d. A sysinfo.csv that cannot be right (gemm_fp8 on an MI325X): the
  // summary says so, and its figures above peak are not bars.
  const fp8 = options.find((o) => o.text === 'rocprofiler-compute/gemm_fp8_3.1.0_MI325X');
  await go(page, `w=${fp8.value}`);
  await checkSummary(page, fp8.value, 'gemm_fp8');
  await checkNames(page, 'gemm_fp8');
  await (await page.$('#panel-summary')).screenshot({ path: `${shots}/10-implausible-summary.png` });

  // 8e. A Radeon collection (gfx1100): what the chip cannot measure is one
  // line above the summary, each statement of `lumen analyze --format
  // json` when opened, and the roofline says its FLOPs cannot be measured.
  const radeon = options.find((o) => o.text.includes('gfx1100'));
  check(radeon !== undefined, 'the gfx1100 collection is listed');
  if (radeon) {
    await go(page, `w=${radeon.value}`);
    const notes = await page.$$eval('#content details.unmeasurable', (ds) => ds.map((d) => ({
      head: d.querySelector('summary').textContent,
      items: Array.from(d.querySelectorAll('li')).map((l) => l.textContent),
    })));
    const want = JSON.parse(execFileSync(lumen, ['analyze', '-w', process.env.RDNA_DIR, '--format', 'json'],
      { maxBuffer: 64 << 20 })).workloads[0].not_measurable;
    check(notes.length === 1 && notes[0].head.startsWith('Not measurable on gfx1100: FLOP counts and WMMA operations;'),
      `one line says what gfx1100 cannot measure (${notes.map((n) => n.head).join(' | ')})`);
    check(notes.length === 1 && notes[0].items.length === want.length &&
      want.every((x, i) => notes[0].items[i] === `${x.what}: ${x.why}`), 'it opens to the CLI\'s statements');
    await page.click('#content details.unmeasurable summary');
    const first = await page.$eval('#content', (m) => m.firstElementChild && m.firstElementChild.className);
    check(first === 'unmeasurable', `the line comes before the summary (${first})`);
    const summaryText = await page.textContent('#panel-summary');
    check(summaryText.includes('FLOP counts and WMMA operations cannot be measured on gfx1100'),
      'the summary says the FLOPs cannot be measured on gfx1100');
    await page.screenshot({ path: `${shots}/11-not-measurable.png` });
  }

  // 8f. An Nsight Compute export (an A10): its kernels are placed on the
  // roofline at DRAM from part of their arithmetic (the FP32 counters),
  // and rules read metrics it lacks: the cards say so with the figures of
  // `lumen analyze --format json --summary`.
  const ncu = options.find((o) => o.text.endsWith('ncu/cc86_metrics'));
  check(ncu !== undefined, `the Nsight Compute export is listed (${options.map((o) => o.text).join(', ')})`);
  if (ncu) {
    await go(page, `w=${ncu.value}`);
    const want = JSON.parse(execFileSync(lumen, ['analyze', '-w', NCU, '--format', 'json', '--summary'],
      { maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'ignore'] })).summary;
    const ks = want.kernels;
    check(ks.some((k) => k.roofline.memory === 'DRAM' && typeof k.roofline.gflops === 'number') &&
      ks.some((k) => k.roofline.ops_not_collected) && ks.some((k) => k.rules_not_evaluated && !k.findings.length),
      `the CLI places cc86_metrics' kernels at DRAM from part of their arithmetic, with rules not evaluated ` +
      `(${ks.map((k) => `${k.roofline.memory}/${k.rules_not_evaluated}`).join(', ')})`);
    await checkSummary(page, ncu.value, 'cc86_metrics', want);
    const text = await page.textContent('#panel-summary');
    check(!/No rule fired\./.test(text) && !/\bHBM\b/.test(text), 'cc86_metrics: no card says "No rule fired." or HBM');
    await (await page.$('#panel-summary')).screenshot({ path: `${shots}/12-ncu-summary.png` });
  }

  check(errors.length === 0, `no errors in the page's console (${errors.join(' | ')})`);

  // 9. A bad filter says so on the page.
  await page.fill('#kregex', '(unclosed');
  await page.click('#apply');
  await page.waitForFunction(() => document.body.dataset.state === 'error', null, { timeout: 30000 });
  const err = await page.textContent('#status');
  check(/-k|missing|unclosed|parenthes/i.test(err), `a bad regex is reported on the page (${err})`);
} finally {
  await browser.close();
}
if (failures.length) {
  console.log(`${failures.length} check(s) failed`);
  process.exit(1);
}
console.log('PASS');
