// views.test.mjs - the GUI's views that follow a choice, in Chromium: the
// dispatch drill-down (its values against `lumen analyze -d N`, the chart
// of one metric across the kernel's dispatches against /api/series), the
// chosen kernel marked in every table, a comparison's rows in the
// baseline's order, a filter error that clears the old tables, keyboard
// use (Tab order, Enter and Space, a visible focus outline), the text
// contrast of the palette, no page-level horizontal scroll at 1,280 px,
// and the rank table of a multi-rank folder built here (a second server).
// Saves screenshots.
//
// Usage: node views.test.mjs URL LUMEN SHARED_DIR SCREENSHOT_DIR
// (served: f0 = vcopy/MI200, f1 = _mix/mix_MI200, f2 and f3 two
// rocprofiler-compute folders, and a store entry)
import { chromium } from 'playwright-core';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

const [url, lumen, shared, shots] = process.argv.slice(2);
const WL = `${shared}/workloads`;
const MIX = `${WL}/_mix/mix_MI200`;
mkdirSync(shots, { recursive: true });
const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
};

function cli(...args) {
  const out = execFileSync(lumen, ['analyze', ...args, '--format', 'json'], { maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'ignore'] });
  return JSON.parse(out.toString());
}

function cliTable(report, id) {
  for (const p of report.panels) for (const t of p.tables) if (t.id === id) return t;
  return null;
}

async function ready(page) {
  await page.waitForFunction(() => document.body.dataset.state === 'ready' || document.body.dataset.state === 'error',
    null, { timeout: 60000 });
  const state = await page.evaluate(() => document.body.dataset.state);
  if (state !== 'ready') throw new Error(`the page says: ${await page.textContent('#status')}`);
}

async function go(page, hash) {
  await page.evaluate((h) => { document.body.dataset.state = 'loading'; location.hash = h; }, hash);
  await ready(page);
}

// Text contrast of every visible element with its own text, from computed
// styles: the colour against the first opaque background up the tree.
async function contrast(page) {
  return page.evaluate(() => {
    const rgb = (s) => {
      const m = s.match(/rgba?\(([^)]+)\)/);
      if (!m) return null;
      const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
      return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
    };
    const lum = (c) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
    };
    const background = (e) => {
      for (let n = e; n; n = n.parentElement) {
        const c = rgb(getComputedStyle(n).backgroundColor);
        if (c && c.a > 0.5) return c;
      }
      return { r: 255, g: 255, b: 255, a: 1 };
    };
    const out = { checked: 0, worst: Infinity, worstWhat: '', low: [] };
    for (const e of document.querySelectorAll('body *')) {
      if (e.closest('svg, canvas, option, select[disabled], button:disabled')) continue;
      const own = Array.from(e.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
      if (!own) continue;
      const r = e.getBoundingClientRect();
      const st = getComputedStyle(e);
      if (r.width === 0 || r.height === 0 || st.visibility === 'hidden' || Number(st.opacity) < 0.5) continue;
      const fg = rgb(st.color), bg = background(e);
      const l1 = lum(fg), l2 = lum(bg);
      const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
      out.checked++;
      const what = `${e.tagName.toLowerCase()}.${e.className} "${e.textContent.trim().slice(0, 30)}" ${st.color} on ${JSON.stringify(bg)}`;
      if (ratio < out.worst) { out.worst = ratio; out.worstWhat = what; }
      if (ratio < 4.5 && out.low.length < 5) out.low.push(`${ratio.toFixed(2)} ${what}`);
    }
    return out;
  });
}

async function checkContrast(page, label, least = 20) {
  const c = await contrast(page);
  check(c.checked >= least && c.low.length === 0,
    `${label}: text contrast >= 4.5:1 for ${c.checked} elements (lowest ${c.worst.toFixed(2)}: ${c.worstWhat}) ${c.low.join(' | ')}`);
}

async function checkWidth(page, label) {
  const w = await page.evaluate(() => ({ scroll: document.scrollingElement.scrollWidth, view: window.innerWidth }));
  check(w.scroll <= 1280, `${label}: no page-level horizontal scroll at ${w.view} px (scrollWidth ${w.scroll})`);
}

// A multi-rank folder: vcopy/MI200 as rank.0..rank.2, rank 1's kernels
// five times as long (End_Timestamp moved in every file that has one).
function splitCsv(line) {
  const out = [];
  let cur = '', quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    if (ch === ',' && !quoted) { out.push(cur); cur = ''; } else cur += ch;
  }
  out.push(cur);
  return out;
}
const rankDir = mkdtempSync(`${tmpdir()}/lumen-ranks-`);
for (let r = 0; r < 3; r++) cpSync(`${WL}/vcopy/MI200`, `${rankDir}/rank.${r}`, { recursive: true });
for (const f of readdirSync(`${rankDir}/rank.1`).filter((n) => n.endsWith('.csv'))) {
  const lines = readFileSync(`${rankDir}/rank.1/${f}`, 'utf8').split('\n');
  const head = splitCsv(lines[0]);
  const s0 = head.indexOf('Start_Timestamp'), e0 = head.indexOf('End_Timestamp');
  if (s0 < 0 || e0 < 0) continue;
  const out = lines.map((l, i) => {
    if (i === 0 || !l.trim()) return l;
    const c = splitCsv(l);
    c[e0] = String(BigInt(c[s0]) + (BigInt(c[e0]) - BigInt(c[s0])) * 5n);
    return c.join(',');
  });
  writeFileSync(`${rankDir}/rank.1/${f}`, out.join('\n'));
}
const rankServer = spawn(lumen, ['serve', '--listen', '127.0.0.1:0', '-w', rankDir], { stdio: ['ignore', 'pipe', 'inherit'] });
const rankUrl = await new Promise((resolve, reject) => {
  let text = '';
  rankServer.stdout.on('data', (d) => {
    text += d;
    const m = text.match(/http:\/\/\S+/);
    if (m) resolve(m[0]);
  });
  rankServer.on('exit', (code) => reject(new Error(`lumen serve on the rank folder exited (${code})`)));
  setTimeout(() => reject(new Error('lumen serve on the rank folder did not start')), 20000);
});

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-dev-shm-usage', '--disable-gpu'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${url}#w=f1`);
  await ready(page);
  await page.waitForSelector('#panel-summary .card');
  await checkWidth(page, 'overview');
  await checkContrast(page, 'overview');

  // 1. The dispatch drill-down: dispatch 3's row opens its values.
  const D = 3;
  const row = await page.$(`[data-table="0.2"] tr[data-row] td:nth-child(2)[data-value="${D}"]`);
  check(row !== null, `the dispatch list shows dispatch ${D}`);
  await row.click();
  await page.waitForFunction(() => {
    const d = document.getElementById('drill');
    const c = d && d.querySelector('.drill-chart');
    return d && d.dataset.state !== 'loading' && c && c.dataset.state && c.dataset.state !== 'loading';
  }, null, { timeout: 60000 });
  const drill = await page.evaluate(() => {
    const d = document.getElementById('drill');
    const tr = d.querySelector('table[data-drill-table="2.1"] tr[data-row="2.1.1"]');
    return {
      state: d.dataset.state, dispatch: d.dataset.dispatch, title: d.querySelector('h2').textContent,
      kernel: d.querySelector('.kname').textContent,
      value: tr ? Number(tr.children[1].dataset.value) : null,
      chart: d.querySelector('.drill-chart').dataset.state, points: Number(d.querySelector('.drill-chart').dataset.points),
      metric: d.querySelector('select.drill-metric').value,
    };
  });
  const one = cli('-w', MIX, '-d', String(D));
  const want = cliTable(one, '2.1').rows.find((r) => r.id === '2.1.1').cells[1];
  const kernelOfD = cliTable(one, '0.2').rows[0].cells[2];
  check(drill.state === 'ready' && drill.dispatch === String(D) && drill.title.includes(`Dispatch ${D}`),
    `the drill-down shows dispatch ${D} (${drill.title})`);
  check(drill.kernel === kernelOfD, `the drill-down names the dispatch's kernel (${drill.kernel.slice(0, 40)})`);
  check(drill.value === want, `the drill-down's VALU IOPs equals lumen analyze -d ${D} (${want}; page ${drill.value})`);
  const calls = cliTable(cli('-w', MIX), '0.1').rows.find((r) => r.cells[1] === kernelOfD).cells[2];
  check(drill.chart === 'ready' && drill.points === calls,
    `the chart has a point per dispatch of the kernel (${calls}; page ${drill.points}, ${drill.chart})`);
  // The series the chart drew: the value at dispatch D is the CLI's.
  const series = await page.evaluate(async (k) => {
    const r = await fetch(`api/series?w=f1&kn=${encodeURIComponent(k)}&m=2.1.1`);
    return r.json();
  }, kernelOfD);
  const atD = series.points.find((p) => p.d === D);
  check(!series.downsampled && atD && atD.v === want, `/api/series at dispatch ${D} equals the CLI (${atD && atD.v})`);
  const other = series.points.find((p) => p.d !== D && p.v !== null);
  if (other) {
    const wantOther = cliTable(cli('-w', MIX, '-d', String(other.d), '-b', '2.1'), '2.1').rows.find((r) => r.id === '2.1.1').cells[1];
    check(other.v === wantOther, `/api/series at dispatch ${other.d} equals lumen analyze -d ${other.d} (${wantOther})`);
  }
  // Another metric by keyboard: Enter on a row of the dispatch's table.
  await page.focus('#drill table[data-drill-table="2.1"] tr[data-row="2.1.0"]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#drill select.drill-metric').value === '2.1.0' &&
    document.querySelector('#drill .drill-chart').dataset.state === 'ready', null, { timeout: 60000 });
  check(true, 'Enter on a row of the drill-down charts that metric');
  await page.waitForTimeout(300);
  await (await page.$('#drill')).screenshot({ path: `${shots}/10-drill-down.png` });
  await checkWidth(page, 'drill-down');
  await checkContrast(page, 'drill-down');

  // 2. The chosen kernel, marked in every table with a kernel column.
  const cards = await page.$$('#panel-summary .card');
  const chosen = await cards[1].getAttribute('data-kernel');
  await cards[1].click();
  const marked = await page.evaluate(() => Array.from(document.querySelectorAll('tr.chosen-kernel')).map((tr) => {
    const table = tr.closest('table');
    return { table: table.closest('[data-table]').dataset.table, kernel: tr.children[Number(table.dataset.kernelCol)].dataset.text };
  }));
  const inList = cliTable(cli('-w', MIX), '0.2').rows.filter((r) => r.cells[2] === chosen).length;
  check(marked.length > 0 && marked.every((m) => m.kernel === chosen), `marked rows all name the chosen kernel (${marked.length})`);
  check(marked.filter((m) => m.table === '0.1').length === 1, 'the top-kernels table marks one row');
  check(marked.filter((m) => m.table === '0.2').length === inList, `the dispatch list marks the kernel's ${inList} dispatches`);
  check(await page.$eval('#panel-summary .card.chosen-kernel', (c) => c.dataset.kernel) === chosen, 'the chosen card is marked');
  await page.evaluate(() => document.getElementById('table-0.1').scrollIntoView());
  await page.screenshot({ path: `${shots}/11-chosen-kernel.png` });
  await checkContrast(page, 'chosen kernel');
  // From the top-kernels table, by keyboard (Space).
  const topRow = await page.$('[data-table="0.1"] tr[data-row="0"]');
  const topKernel = await topRow.evaluate((tr) => tr.children[Number(tr.closest('table').dataset.kernelCol)].dataset.text);
  await topRow.focus();
  await page.keyboard.press(' ');
  const marked2 = await page.$$eval('tr.chosen-kernel', (trs) => trs.map((tr) => tr.children[Number(tr.closest('table').dataset.kernelCol)].dataset.text));
  check(marked2.length > 0 && marked2.every((k) => k === topKernel), `Space on a top-kernels row marks ${topKernel.slice(0, 30)}… (${marked2.length} rows)`);

  // 3. A comparison keeps the baseline's rows in the baseline's order.
  await go(page, 'w=f0&base=f1');
  const baseOwn = cli('-w', MIX);
  const shownKernels = await page.$$eval('[data-table="0.1"] tr[data-row]', (trs) => trs.map((tr) =>
    tr.children[Number(tr.closest('table').dataset.kernelCol)].dataset.text || ''));
  const baseKernels = cliTable(baseOwn, '0.1').rows.map((r) => r.cells[1]);
  check(JSON.stringify(shownKernels) === JSON.stringify(baseKernels),
    `compared top kernels follow the baseline's order (${shownKernels.length} rows; baseline ${baseKernels.length})`);
  const shownIds = await page.$$eval('[data-table="2.1"] tr[data-row]', (trs) => trs.map((tr) => tr.dataset.row));
  const baseIds = cliTable(baseOwn, '2.1').rows.map((r) => r.id);
  check(JSON.stringify(shownIds) === JSON.stringify(baseIds), `compared speed-of-light rows follow the baseline's order (${shownIds.length})`);
  await page.evaluate(() => document.getElementById('table-0.1').scrollIntoView());
  await page.screenshot({ path: `${shots}/12-comparison-order.png` });
  await checkWidth(page, 'comparison');
  await checkContrast(page, 'comparison');

  // Compared kernel cells: shortened, the whole name in the title.
  const cmpNames = await page.$$eval('[data-table="0.1"] tr[data-row]', (trs) => trs.map((tr) => {
    const td = tr.children[Number(tr.closest('table').dataset.kernelCol)];
    return { full: td.dataset.text || '', title: td.title, text: td.textContent };
  }));
  check(cmpNames.length > 0 && cmpNames.every((n) => n.title === n.full && [...n.text].length <= 80) &&
    new Set(cmpNames.map((n) => n.text)).size === new Set(cmpNames.map((n) => n.full)).size,
  `compared top kernels: names of at most 80 characters, distinct, the whole name in the title (${cmpNames.map((n) => n.text).join(' | ').slice(0, 120)}…)`);

  // 3b. The summary of a folder whose sysinfo.csv cannot be right (f2,
  // gemm_fp8 on an MI325X): the warning and the line of figures above peak
  // are shown, readable, within the page's width.
  await go(page, 'w=f2');
  await page.waitForSelector('#panel-summary .card');
  const warned = await page.evaluate(() => ({
    fields: document.querySelectorAll('#panel-summary .implausible li[data-field]').length,
    above: document.querySelectorAll('#panel-summary .above-peak [data-metric]').length,
  }));
  const c3 = await contrast(page);
  const w3 = await page.evaluate(() => document.scrollingElement.scrollWidth);
  check(warned.fields > 0 && warned.above > 0 && c3.low.length === 0 && w3 <= 1280,
    `implausible sysinfo: ${warned.fields} fields warned of, ${warned.above} figures above peak listed, text contrast ` +
    `>= 4.5:1 (lowest ${c3.worst.toFixed(2)}: ${c3.worstWhat}), page width ${w3} px`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `${shots}/12b-implausible.png` });

  // 4. A filter error: said in the GUI's words, next to the field, and the
  // old tables are gone.
  await go(page, 'w=f1');
  check(await page.$$eval('[data-table]', (t) => t.length) > 10, 'tables are shown before the bad filter');
  await page.fill('#kregex', 'xyz');
  await page.click('#apply');
  await page.waitForFunction(() => document.body.dataset.state === 'error', null, { timeout: 30000 });
  const fe = await page.evaluate(() => ({
    text: document.getElementById('filter-error').textContent,
    inForm: document.getElementById('filter-error').closest('#filters') !== null,
    tables: document.querySelectorAll('#content table, [data-table]').length,
    nav: document.querySelectorAll('#panels a').length,
  }));
  check(fe.text === "No dispatch matches kernel filter 'xyz'" && fe.inForm, `the filter error reads "${fe.text}", in the filter bar`);
  check(fe.tables === 0 && fe.nav === 0, `no stale table stays on the page (${fe.tables} tables, ${fe.nav} panel links)`);
  await page.screenshot({ path: `${shots}/13-filter-error.png` });
  await checkContrast(page, 'filter error', 10);
  await page.fill('#kregex', '(unclosed');
  await page.click('#apply');
  await page.waitForFunction(() => document.getElementById('filter-error').textContent.includes('unclosed'), null, { timeout: 30000 });
  const fe2 = await page.textContent('#filter-error');
  check(/^Kernel regex '\(unclosed'/.test(fe2), `a bad regex names the field, not a flag (${fe2})`);

  // 5. Keyboard: Tab walks the controls in order, with a visible outline
  // (a fresh page: nothing focused, no kernel chosen).
  const kb = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  kb.on('pageerror', (e) => errors.push(e.message));
  await kb.goto(`${url}#w=f1`);
  await ready(kb);
  await kb.waitForSelector('#panel-summary .card');
  const order = [];
  let outline = null;
  for (let i = 0; i < 40; i++) {
    await kb.keyboard.press('Tab');
    const f = await kb.evaluate(() => {
      const e = document.activeElement;
      const st = getComputedStyle(e);
      return { id: e.id, card: e.classList.contains('card'), style: st.outlineStyle, width: parseFloat(st.outlineWidth) };
    });
    if (f.id) order.push(f.id);
    if (outline === null && f.id === 'kregex') outline = f;
    if (f.card) { order.push('card'); break; }
  }
  const want5 = ['workload', 'baseline', 'norm', 'weight', 'kregex', 'klist', 'dispatch', 'gpu', 'rank', 'apply', 'reset', 'share'];
  check(JSON.stringify(order.slice(0, want5.length)) === JSON.stringify(want5), `Tab order: ${order.join(' → ')}`);
  check(order.includes('card'), 'Tab reaches the summary cards');
  check(outline && outline.style !== 'none' && outline.width >= 2, `the focused control has an outline (${JSON.stringify(outline)})`);
  const cardFocus = await kb.evaluate(() => ({ kernel: document.activeElement.dataset.kernel,
    outline: getComputedStyle(document.activeElement).outlineStyle }));
  await kb.keyboard.press('Enter');
  const cardMarked = await kb.evaluate(() => document.activeElement.classList.contains('chosen-kernel'));
  check(cardMarked && cardFocus.outline !== 'none', 'Enter on a focused card marks its kernel');
  await kb.screenshot({ path: `${shots}/14-keyboard-focus.png` });
  const drow = await kb.$('[data-table="0.2"] tr[data-row="1"]');
  await drow.focus();
  await kb.keyboard.press(' ');
  await kb.waitForFunction(() => document.getElementById('drill') && document.getElementById('drill').dataset.state === 'ready',
    null, { timeout: 60000 });
  const focusedAfter = await kb.evaluate(() => document.activeElement.closest('#drill') !== null);
  check(focusedAfter, 'Space on a dispatch row opens the drill-down and moves the focus there');

  // 6. Ranks: a single-rank workload has no Ranks section; a folder of
  // rank.0..rank.2 parts, rank 1's kernels made five times longer, has one.
  await go(page, 'w=f0');
  check(await page.$('#panel-ranks') === null && await page.$('#panel-2') !== null,
    'a single-rank workload shows its panels and no Ranks section');
  const rp = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  rp.on('pageerror', (e) => errors.push(e.message));
  await rp.goto(`${rankUrl}#w=f0`);
  await ready(rp);
  await rp.waitForFunction(() => window.lumenRankChart && window.lumenRankChart(), null, { timeout: 30000 });
  const rv = await rp.evaluate(() => ({
    rows: Array.from(document.querySelectorAll('#table-ranks tr[data-row]')).map((tr) => tr.dataset.row),
    slowest: document.querySelector('.rank-facts').dataset.slowest,
    slowRow: (document.querySelector('#table-ranks tr.slowest') || {}).dataset,
    facts: document.querySelector('.rank-facts').textContent,
    chart: window.lumenRankChart(),
    nav: Array.from(document.querySelectorAll('#panels a')).map((a) => a.textContent),
  }));
  check(JSON.stringify(rv.rows) === '["0","1","2"]', `the Ranks table has a row per rank (${rv.rows.join(', ')})`);
  check(rv.slowest === '1' && rv.slowRow && rv.slowRow.row === '1', `the slowest rank shown is rank 1, the slowed one (${rv.facts})`);
  const rcli = cli('-w', rankDir).ranks;
  check(rv.chart.bars === 3 && rv.chart.values.length === 3 &&
    rv.chart.values.every((v, i) => v === rcli.ranks[i].kernel_time_ns) && rv.chart.values[1] === Math.max(...rv.chart.values),
    `the chart has a bar per rank, lumen analyze's kernel times (${rv.chart.values.join(', ')})`);
  check(rv.chart.slowLabel.includes('slowest') && rv.nav.includes('Ranks'),
    `the chart marks the slowest bar (${rv.chart.slowLabel}); the panel list links the Ranks section`);
  await (await rp.$('#panel-ranks')).screenshot({ path: `${shots}/15-ranks.png` });
  await checkWidth(rp, 'ranks');
  await checkContrast(rp, 'ranks');
  // The rank field: two ranks still make a table; a rank not in the data
  // is a filter error, and the old tables go.
  await rp.fill('#rank', '0,2');
  await rp.click('#apply');
  await rp.waitForFunction(() => document.body.dataset.state === 'ready' && location.hash.includes('rank=0'), null, { timeout: 30000 });
  const two = await rp.$$eval('#table-ranks tr[data-row]', (trs) => trs.map((tr) => tr.dataset.row));
  check(JSON.stringify(two) === '["0","2"]', `ranks 0,2 selected: the table shows them (${two.join(', ')})`);
  await rp.fill('#rank', '7');
  await rp.click('#apply');
  await rp.waitForFunction(() => document.body.dataset.state === 'error', null, { timeout: 30000 });
  const re = await rp.evaluate(() => ({ text: document.getElementById('filter-error').textContent,
    tables: document.querySelectorAll('[data-table]').length }));
  check(/^Ranks '7': .*ranks in the data: 0:3/.test(re.text) && re.tables === 0, `a rank not in the data is a filter error (${re.text})`);

  check(errors.length === 0, `no errors in the page (${errors.join(' | ')})`);
} finally {
  await browser.close();
  if (rankServer) rankServer.kill();
  rmSync(rankDir, { recursive: true, force: true });
}
if (failures.length) {
  console.log(`${failures.length} check(s) failed`);
  process.exit(1);
}
console.log('PASS');
