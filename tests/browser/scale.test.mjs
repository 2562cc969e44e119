// scale.test.mjs - the web GUI on a workload of many dispatches: the first
// view's time as the browser measures it (performance.now() when the page
// is ready, from the start of navigation), the dispatch list paged by the
// server (a page of rows in the DOM, not one per dispatch), next/previous,
// sorting by a column and filtering, each page checked against the rows
// of `lumen analyze -b 0.2 --format json`. Saves screenshots.
//
// Usage: node scale.test.mjs URL LUMEN WORKLOAD_DIR DISPATCHES SCREENSHOT_DIR
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';

const [url, lumen, workload, dispatchText, shots] = process.argv.slice(2);
const N = Number(dispatchText);
const FIRST_VIEW_MS = 1000;
const MAX_ROWS_IN_PAGE = 2000;
mkdirSync(shots, { recursive: true });
const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
};

// The CLI's dispatch list: the oracle for every page.
const cliList = JSON.parse(execFileSync(lumen, ['analyze', '-w', workload, '-b', '0.2', '--format', 'json'],
  { maxBuffer: 256 << 20 }).toString()).panels[0].tables.find((t) => t.id === '0.2');

async function shownRows(page) {
  return page.$$eval('[data-table="0.2"] tr[data-row]', (rows) => rows.map((r) => ({
    id: r.dataset.row,
    cells: Array.from(r.querySelectorAll('td')).map((td) => (td.dataset.value !== undefined ? Number(td.dataset.value) : td.textContent)),
  })));
}

// The page shows rows want (CLI rows) in order, cell by cell.
function samePage(got, want, label) {
  let same = got.length === want.length;
  want.forEach((row, i) => {
    const g = got[i];
    if (!g || g.id !== row.id) { same = false; return; }
    row.cells.forEach((v, k) => { if (v !== g.cells[k]) same = false; });
  });
  check(same && want.length > 0, `${label}: ${got.length} rows equal the CLI's (first ${got[0] && got[0].id})`);
}

async function pageReady(page) {
  await page.waitForFunction(() => {
    const b = document.querySelector('[data-table="0.2"]');
    return b && b.dataset.pageState === 'ready';
  }, null, { timeout: 30000 });
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

  // 1. The first view.
  await page.goto(`${url}#w=f0`);
  await page.waitForFunction(() => document.body.dataset.state === 'ready' || document.body.dataset.state === 'error',
    null, { timeout: 120000 });
  check(await page.evaluate(() => document.body.dataset.state) === 'ready', `the page is ready (${await page.textContent('#status')})`);
  const firstView = await page.evaluate(() => window.lumenFirstViewMs);
  console.log(`first view: ${firstView.toFixed(0)} ms (in the browser, from navigation to every panel shown)`);
  // A speed goal, not a correctness check: enforced where asked for
  // (LUMEN_TIMING_GOALS=1, as a benchmark run does), reported otherwise, so
  // that a loaded machine does not fail the suite.
  if (process.env.LUMEN_TIMING_GOALS === '1')
    check(firstView <= FIRST_VIEW_MS, `the first view takes at most ${FIRST_VIEW_MS} ms (${firstView.toFixed(0)} ms)`);
  else if (firstView > FIRST_VIEW_MS) console.log(`note: the first view took over the ${FIRST_VIEW_MS} ms goal`);
  const status = await page.textContent('#status');
  check(status.startsWith(`${N} of ${N} dispatches`), `the status counts every dispatch (${status})`);
  const rowsInPage = await page.$$eval('tr', (t) => t.length);
  check(rowsInPage <= MAX_ROWS_IN_PAGE, `the page holds ${rowsInPage} table rows (at most ${MAX_ROWS_IN_PAGE}) for ${N} dispatches`);
  const box = await page.$('[data-table="0.2"]');
  check(await box.getAttribute('data-rows-total') === String(N), `the dispatch list says it has ${N} rows`);
  samePage(await shownRows(page), cliList.rows.slice(0, 100), 'first page');
  await page.evaluate(() => document.querySelector('[data-table="0.2"]').scrollIntoView());
  await page.screenshot({ path: `${shots}/01-dispatch-list.png` });

  // 2. Next and previous.
  await page.click('[data-table="0.2"] .pager .next');
  await page.waitForFunction(() => document.querySelector('[data-table="0.2"]').dataset.offset === '100');
  await pageReady(page);
  samePage(await shownRows(page), cliList.rows.slice(100, 200), 'second page');
  check((await page.textContent('[data-table="0.2"] .range')).startsWith(`rows 101–200 of ${N.toLocaleString('en-US')}`),
    `the pager names the rows (${await page.textContent('[data-table="0.2"] .range')})`);
  await page.click('[data-table="0.2"] .pager .prev');
  await page.waitForFunction(() => document.querySelector('[data-table="0.2"]').dataset.offset === '0');
  await pageReady(page);
  samePage(await shownRows(page), cliList.rows.slice(0, 100), 'back to the first page');

  // 3. Sort by Dispatch_ID, descending (two clicks), then page on.
  const col = cliList.columns.indexOf('Dispatch_ID');
  const th = `[data-table="0.2"] th[data-col="${col}"]`;
  await page.click(th);
  await pageReady(page);
  await page.click(th);
  await page.waitForFunction((sel) => document.querySelector(sel).dataset.order === 'desc', th);
  await pageReady(page);
  const byIdDesc = cliList.rows.slice().sort((a, b) => b.cells[col] - a.cells[col]);
  samePage(await shownRows(page), byIdDesc.slice(0, 100), 'sorted by Dispatch_ID, descending');
  await page.click('[data-table="0.2"] .pager .next');
  await page.waitForFunction(() => document.querySelector('[data-table="0.2"]').dataset.offset === '100');
  await pageReady(page);
  samePage(await shownRows(page), byIdDesc.slice(100, 200), 'sorted, second page');
  await page.screenshot({ path: `${shots}/02-sorted.png` });

  // 4. A filter that matches nothing, then one that matches every row.
  await page.fill('[data-table="0.2"] .pager .filter', 'no-such-kernel');
  await page.waitForFunction(() => document.querySelector('[data-table="0.2"]').dataset.matched === '0', null, { timeout: 30000 });
  check((await shownRows(page)).length === 0, 'a filter matching nothing empties the list');
  await page.fill('[data-table="0.2"] .pager .filter', 'VECCOPY');
  await page.waitForFunction((n) => document.querySelector('[data-table="0.2"]').dataset.matched === String(n), N, { timeout: 30000 });
  await pageReady(page);
  samePage(await shownRows(page), byIdDesc.slice(0, 100), 'a filter matching every row (any case), still sorted');

  // 5. The drill-down's chart over every dispatch of the kernel: the
  // server's answer stays small (even buckets with min and max), and a
  // bucket's min and max are those of its dispatches' own values.
  const t0 = Date.now();
  await page.click('[data-table="0.2"] tr[data-row]');
  await page.waitForFunction(() => {
    const c = document.querySelector('#drill .drill-chart');
    return c && c.dataset.state && c.dataset.state !== 'loading';
  }, null, { timeout: 300000 });
  const chartMs = Date.now() - t0;
  const drawn = await page.evaluate(() => {
    const c = document.querySelector('#drill .drill-chart');
    return { state: c.dataset.state, down: c.dataset.downsampled, points: Number(c.dataset.points), note: c.querySelector('.note').textContent };
  });
  check(drawn.state === 'ready' && drawn.down === 'true' && drawn.points === 1000 && /downsampled/.test(drawn.note),
    `the drill-down chart of ${N} dispatches is downsampled and says so (${drawn.points} points, ${chartMs} ms: ${drawn.note})`);
  const big = await page.evaluate(async () => {
    const r = await fetch('api/series?w=f0&m=2.1.1');
    const text = await r.text();
    return { bytes: text.length, body: JSON.parse(text) };
  });
  const pts = big.body.points;
  check(big.bytes <= 1 << 20, `/api/series for ${N} dispatches is ${big.bytes} bytes (at most 1 MiB)`);
  check(big.body.downsampled && pts.length === 1000 && pts.reduce((a, p) => a + p.n, 0) === N &&
    pts.every((p) => p.min === null || (p.min <= p.mean && p.mean <= p.max)),
    `1000 buckets cover the ${N} dispatches, min <= mean <= max`);
  const b = pts[7];
  const part = await page.evaluate(async (q) => (await fetch(`api/series?w=f0&m=2.1.1&d=${q}`)).json(), `${b.d}:${b.last + 1}`);
  const vals = part.points.map((p) => p.v).filter((v) => v !== null);
  check(!part.downsampled && part.points.length === b.n && Math.min(...vals) === b.min && Math.max(...vals) === b.max,
    `bucket 8 (dispatches ${b.d} to ${b.last}) has the min and max of their own values (${b.min}, ${b.max})`);
  await page.waitForTimeout(300);
  await (await page.$('#drill')).screenshot({ path: `${shots}/03-drill-down-downsampled.png` });

  check(errors.length === 0, `no errors in the page's console (${errors.join(' | ')})`);
} finally {
  await browser.close();
}
if (failures.length) {
  console.log(`${failures.length} check(s) failed`);
  process.exit(1);
}
console.log('PASS');
