// The web workspace's end-to-end scenarios in a real browser (Debian's chromium through
// playwright-core), against `lore demo` serving the example meetings.
//
//   node workspace.mjs SIGN_IN_URL SCREENSHOT_DIR
//
// NODE_PATH must point at a node_modules folder holding playwright-core and axe-core
// (.ci/install-test-clients puts them in $LORE_CLIENTS_DIR/npm/node_modules); LORE_CHROMIUM names
// the browser (default /usr/bin/chromium). Every scenario is one step; a failing step is reported
// with what was expected and what the page showed, and the remaining steps still run. Every page
// visited is screenshotted at 1280 px and 390 px and checked with axe-core at both widths: any
// serious or critical violation fails the run. Exit status 0 only when every step passed.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');
// Evaluated through the DevTools protocol, which the page's Content-Security-Policy (no inline
// scripts) does not govern; a <script> tag would be blocked, as it should be.
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const [signinUrl, shotDir] = process.argv.slice(2);
if (!signinUrl || !shotDir) {
  console.error('usage: node workspace.mjs SIGN_IN_URL SCREENSHOT_DIR');
  process.exit(2);
}
const origin = new URL(signinUrl).origin;
const WIDE = { width: 1280, height: 900 };
const NARROW = { width: 390, height: 844 };

// ---------------------------------------------------------------------------------------------
// Reporting

const results = [];
const a11yFailures = [];
const consoleProblems = [];

class Failure extends Error {}

function fail(message) {
  throw new Failure(message);
}

function expect(condition, message) {
  if (!condition) fail(message);
}

async function step(name, body) {
  try {
    await body();
    results.push({ name, ok: true });
    console.log(`ok    ${name}`);
  } catch (error) {
    const detail = error instanceof Failure ? error.message : (error.stack || String(error));
    results.push({ name, ok: false, detail });
    console.log(`FAIL  ${name}\n      ${detail.replace(/\n/g, '\n      ')}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Page helpers

const browser = await chromium.launch({
  executablePath: process.env.LORE_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
const context = await browser.newContext({ viewport: WIDE, reducedMotion: 'reduce' });
context.setDefaultTimeout(60_000);
context.setDefaultNavigationTimeout(60_000);
const page = await context.newPage();
// Script errors and CSP reports; failed loads are judged by the responses below instead.
page.on('console', (message) => {
  if (message.type() !== 'error' || message.text().startsWith('Failed to load resource')) return;
  consoleProblems.push(`${page.url()}: console error: ${message.text()}`);
});
// A stylesheet, script, image or font the page asks for and does not get (the browser's own
// favicon probe aside).
page.on('response', (response) => {
  const request = response.request();
  if (request.isNavigationRequest() || response.status() < 400) return;
  if (new URL(response.url()).pathname === '/favicon.ico') return;
  consoleProblems.push(`${page.url()}: ${request.resourceType()} ${response.url()} answered ${response.status()}`);
});
page.on('pageerror', (error) => consoleProblems.push(`${page.url()}: ${error.message}`));

let shotNumber = 0;
const checkedPages = new Set();

/** Text of a locator as rendered (innerText), whitespace collapsed. */
async function text(locator) {
  return ((await locator.innerText()) || '').replace(/\s+/g, ' ').trim();
}

/** What the page shows, for failure messages. */
async function shown() {
  const main = page.locator('main');
  const body = (await main.count()) ? await text(main.first()) : await text(page.locator('body'));
  return `${page.url()} shows: "${body.slice(0, 400)}"`;
}

/** Runs axe-core on the page as it is and records serious and critical violations. */
async function axe(name, width) {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
      count: v.nodes.length,
    }));
  });
  for (const v of violations) {
    if (v.impact === 'serious' || v.impact === 'critical') {
      a11yFailures.push(
        `${name} @${width}px: [${v.impact}] ${v.id}: ${v.help} (${v.count} nodes) at ${v.targets.join(' | ')}`,
      );
    }
  }
}

/**
 * Checks the page the browser is on: the shared layout of the contract, then axe and a
 * full-page screenshot at 1280 px and at 390 px. Each named page is checked once per run.
 */
async function checkPage(name) {
  if (checkedPages.has(name)) return;
  checkedPages.add(name);
  expect(await page.locator('main#main').count() === 1, `${name}: no <main id="main"> on ${page.url()}`);
  expect(await page.locator('a[href="#main"]').count() >= 1, `${name}: no skip link to #main on ${page.url()}`);
  const search = page.locator('form[role="search"][action="/search"] input[name="q"]');
  expect(await search.count() >= 1, `${name}: no header search form on ${page.url()}`);
  shotNumber += 1;
  const base = `${String(shotNumber).padStart(2, '0')}-${name}`;
  for (const [viewport, width] of [[WIDE, 1280], [NARROW, 390]]) {
    await page.setViewportSize(viewport);
    await axe(name, width);
    await page.screenshot({ path: path.join(shotDir, `${base}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize(WIDE);
}

/** Navigates and expects the given status (200 by default). */
async function visit(url, status = 200) {
  const response = await page.goto(new URL(url, origin).href);
  expect(response, `no response for ${url}`);
  expect(
    response.status() === status,
    `GET ${url}: expected status ${status}, got ${response.status()}`,
  );
  return response;
}

/** Clicks and waits for the navigation it starts. */
async function clickAndWait(locator) {
  await Promise.all([page.waitForNavigation(), locator.click()]);
}

/** The entity page URL for the search hit named exactly `name`, found through the search page. */
async function findEntity(name, { check = false } = {}) {
  await visit(`/search?q=${encodeURIComponent(name)}`);
  if (check) await checkPage('search');
  const hits = page.locator('a[data-testid="search-result"][href*="/entities/"]');
  const count = await hits.count();
  const seen = [];
  for (let i = 0; i < count; i += 1) {
    const hit = hits.nth(i);
    const label = await text(hit);
    seen.push(label);
    if (label === name || label.startsWith(`${name} `) || label.startsWith(`${name}\n`) || label.includes(name)) {
      return { hit, href: await hit.getAttribute('href') };
    }
  }
  return fail(`search for "${name}": no entity result named ${name}; results: ${JSON.stringify(seen)}`);
}

/** Rows of the current snapshot for a predicate (`title` matches `title` and `has_title`). */
function claimRows(predicate) {
  return page.locator(
    `[data-testid="claim"][data-predicate="${predicate}"], [data-testid="claim"][data-predicate="has_${predicate}"]`,
  );
}

async function entityName() {
  const h1 = page.locator('h1[data-testid="entity-name"]');
  expect(await h1.count() === 1, `no h1[data-testid="entity-name"] on ${page.url()}`);
  return text(h1);
}

async function flash() {
  const status = page.locator('[role="status"]');
  expect(await status.count() >= 1, `no flash [role="status"] after the form on ${page.url()}`);
  return text(status.first());
}

/** Opens the collapsed <details> a form sits in, as a user would, by its summary. */
async function reveal(form) {
  const closed = await form.evaluate((f) => {
    const details = f.closest('details');
    return Boolean(details && !details.open);
  });
  if (closed) await form.locator('xpath=ancestor::details[1]/summary').click();
}

/** Fills a form field whether it is an input, a textarea or a select. */
async function fill(form, name, value) {
  await reveal(form);
  const field = form.locator(`[name="${name}"]`).first();
  expect(await field.count() === 1, `form has no field named ${name}`);
  const tag = await field.evaluate((el) => el.tagName.toLowerCase());
  if (tag === 'select') {
    const options = await field.locator('option').evaluateAll((os) => os.map((o) => o.value));
    const wanted = options.find((o) => o === value)
      ?? options.find((o) => o === `has_${value}` || `has_${o}` === value);
    expect(wanted !== undefined, `select ${name} has no option ${value}; options: ${options.join(', ')}`);
    await field.selectOption(wanted);
  } else {
    await field.fill(value);
  }
}

async function submit(form) {
  await reveal(form);
  const button = form.locator('button[type="submit"], button:not([type]), input[type="submit"]').first();
  expect(await button.count() === 1, 'form has no submit button');
  const action = await form.getAttribute('action');
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === action),
    page.waitForNavigation(),
    button.click(),
  ]);
  expect(
    response.status() === 303,
    `POST ${action}: expected 303, got ${response.status()}; ${await shown()}`,
  );
}

const entityBody = async () => text(page.locator('main'));

// ---------------------------------------------------------------------------------------------
// Scenarios

let clicks = 0;
let aliceHref = null;

await step('sign-in link sets an HttpOnly SameSite=Strict session cookie and opens home', async () => {
  const response = await page.goto(signinUrl);
  clicks += 1; // opening the printed link
  expect(response.status() === 200, `sign-in: expected to land on home (200), got ${response.status()}`);
  expect(new URL(page.url()).pathname === '/', `sign-in: expected to land on /, got ${page.url()}`);
  const cookie = (await context.cookies()).find((c) => c.name === 'lore_session');
  expect(cookie, 'sign-in: no lore_session cookie');
  expect(cookie.httpOnly, 'sign-in: lore_session is not HttpOnly');
  expect(cookie.sameSite === 'Strict', `sign-in: lore_session SameSite is ${cookie.sameSite}, expected Strict`);
  expect(await page.locator('[data-testid="review-count"]').count() === 1, 'home: no [data-testid="review-count"]');
  await checkPage('home');
  // The skip link is the first thing the keyboard reaches.
  await page.keyboard.press('Tab');
  const focused = await page.evaluate(() => document.activeElement?.getAttribute('href'));
  expect(focused === '#main', `home: the first Tab focuses ${focused}, expected the skip link to #main`);
});

await step('without the session cookie the workspace is closed and the link is one-time', async () => {
  const stranger = await browser.newContext();
  const other = await stranger.newPage();
  const home = await other.goto(`${origin}/`);
  const homeBody = await other.locator('body').textContent();
  expect(
    home.status() >= 400 || new URL(other.url()).pathname !== '/' || !homeBody.includes('Alice'),
    `GET / without a session showed the workspace (status ${home.status()})`,
  );
  await other.goto(signinUrl);
  const reused = (await stranger.cookies()).find((c) => c.name === 'lore_session');
  expect(!reused, 'the sign-in link worked a second time; it must be one-time');
  await stranger.close();
});

await step('search "Alice" and open Alice Chen from a result', async () => {
  await visit('/');
  const q = page.locator('form[role="search"] input[name="q"]').first();
  await q.fill('Alice');
  await Promise.all([page.waitForNavigation(), q.press('Enter')]);
  expect(new URL(page.url()).pathname === '/search', `search: expected /search, got ${page.url()}`);
  await checkPage('search');
  const hits = page.locator('a[data-testid="search-result"]');
  expect(await hits.count() >= 2, `search "Alice": expected at least two results, got ${await hits.count()}`);
  expect(await page.locator('main mark').count() >= 1, 'search "Alice": no highlighted (<mark>) snippet');
  const alice = hits.filter({ hasText: 'Alice Chen' }).first();
  expect(await alice.count() === 1, 'search "Alice": no result for Alice Chen');
  await clickAndWait(alice);
  expect(/\/entities\/[^/?#]+$/.test(new URL(page.url()).pathname), `result opened ${page.url()}, not an entity page`);
  expect(await entityName() === 'Alice Chen', `entity page h1 is "${await entityName()}"`);
  aliceHref = new URL(page.url()).pathname;
  await checkPage('entity');
});

let chipHref = null;

await step('goal: Alice\'s current title, since when, who said so, and the one before, in three clicks', async () => {
  // Click 1 was opening the sign-in link; click 2 opens Alice from home (or from search).
  await visit('/');
  let link = page.locator('main a[href^="/entities/"]', { hasText: 'Alice Chen' }).first();
  if (await link.count() === 0) {
    const q = page.locator('form[role="search"] input[name="q"]').first();
    await q.fill('Alice Chen');
    await Promise.all([page.waitForNavigation(), q.press('Enter')]);
    link = page.locator('a[data-testid="search-result"]', { hasText: 'Alice Chen' }).first();
    expect(await link.count() === 1, 'neither home nor search links to Alice Chen');
  }
  await clickAndWait(link);
  clicks += 1;
  expect(await entityName() === 'Alice Chen', `opened "${await entityName()}" instead of Alice Chen`);
  const title = claimRows('title');
  expect(await title.count() === 1, `Alice: expected one current title row, got ${await title.count()}`);
  const row = await text(title);
  expect(row.includes('Principal Researcher'), `Alice's title row reads "${row}", expected Principal Researcher`);
  expect(
    /2026-10-05|Oct(ober)?\.? 5,? 2026|5 Oct(ober)?\.? 2026/.test(row),
    `Alice's title row does not say since when (2026-10-05): "${row}"`,
  );
  const chip = title.locator('a[data-testid="evidence-chip"]').first();
  expect(await chip.count() === 1, 'Alice\'s title has no evidence chip');
  const chipText = await text(chip);
  expect(
    chipText.includes('Northwind weekly: Atlas beta retro · 00:12 · Alice Chen'),
    `chip reads "${chipText}", expected "Northwind weekly: Atlas beta retro · 00:12 · Alice Chen"`,
  );
  chipHref = await chip.getAttribute('href');
  const historyTab = page.locator('a[data-testid="tab-history"]');
  expect(await historyTab.count() === 1, 'Alice: no History tab');
  await clickAndWait(historyTab);
  clicks += 1;
  expect(new URLSearchParams(new URL(page.url()).search).get('tab') === 'history', `History tab opened ${page.url()}`);
  const previous = page.locator('[data-testid="history-claim"]', { hasText: 'Senior Researcher' });
  expect(await previous.count() >= 1, 'History: no claim with the previous title Senior Researcher');
  const status = await previous.first().getAttribute('data-status');
  expect(status === 'superseded', `History: Senior Researcher has data-status="${status}", expected superseded`);
  expect(clicks <= 3, `the answer took ${clicks} clicks`);
  await checkPage('history');
  const back = page.locator('a[data-testid="tab-snapshot"]');
  expect(await back.count() === 1, 'History: no snapshot tab to go back');
});

await step('an evidence chip opens the meeting at the highlighted, targeted segment', async () => {
  expect(chipHref, 'no chip to follow (the previous step failed)');
  const match = chipHref.match(/^\/meetings\/([^/?#]+)\?seg=([^&#]+)#seg-(.+)$/);
  expect(match, `chip links to ${chipHref}, expected /meetings/{id}?seg={sid}#seg-{sid}`);
  expect(match[2] === match[3], `chip link ${chipHref}: ?seg and #seg- name different segments`);
  await visit(aliceHref);
  const chip = claimRows('title').locator('a[data-testid="evidence-chip"]').first();
  await clickAndWait(chip);
  const sid = match[2];
  const segment = page.locator(`[data-testid="segment"][id="seg-${sid}"]`);
  expect(await segment.count() === 1, `meeting page has no segment #seg-${sid}`);
  const state = await segment.evaluate((el) => {
    const box = el.getBoundingClientRect();
    return {
      highlighted: el.classList.contains('highlighted'),
      current: el.getAttribute('aria-current'),
      target: el.matches(':target'),
      inView: box.bottom > 0 && box.top < window.innerHeight,
      text: el.textContent.replace(/\s+/g, ' ').trim(),
    };
  });
  expect(state.highlighted, `segment #seg-${sid} lacks class "highlighted"`);
  expect(state.current === 'true', `segment #seg-${sid} has aria-current="${state.current}"`);
  expect(state.target, `segment #seg-${sid} is not the :target`);
  expect(state.inView, `segment #seg-${sid} is not scrolled into view`);
  expect(state.text.includes('Principal Researcher'), `cited segment reads "${state.text}"`);
  const others = await page.locator('[data-testid="segment"].highlighted').count();
  expect(others === 1, `${others} segments are highlighted, expected only the cited one`);
  await checkPage('meeting');
  // A segment far down its meeting (29:00 of the ownership handoff) is scrolled to as well.
  await visit(aliceHref);
  const late = claimRows('role').locator('a[data-testid="evidence-chip"]', { hasText: '29:00' }).first();
  expect(await late.count() === 1, 'Alice\'s role has no chip at 29:00');
  await clickAndWait(late);
  const lateSid = decodeURIComponent(new URL(page.url()).hash.slice('#seg-'.length));
  const placed = await page.locator(`[id="seg-${lateSid}"]`).evaluate((el) => {
    const box = el.getBoundingClientRect();
    return {
      inView: box.bottom > 0 && box.top < window.innerHeight,
      below: box.top + window.scrollY > window.innerHeight,
      scrolled: window.scrollY,
      current: el.getAttribute('aria-current'),
    };
  });
  expect(placed.current === 'true', `late segment #seg-${lateSid} is not marked aria-current`);
  expect(placed.inView, `late segment #seg-${lateSid} is not scrolled into view (scrollY ${placed.scrolled})`);
  expect(placed.below, `late segment #seg-${lateSid} starts above the fold; pick a later one for this check`);
});

await step('override a value and see it marked manual', async () => {
  const atlas = await findEntity('Atlas');
  await visit(atlas.href);
  const form = page.locator('form[data-testid="override-form"]');
  expect(await form.count() === 1, 'Atlas: no override form');
  await fill(form, 'predicate', 'has_status');
  await fill(form, 'value', 'general availability');
  await submit(form);
  expect(new URL(page.url()).pathname === atlas.href, `override: landed on ${page.url()}, expected ${atlas.href}`);
  await flash();
  const rows = claimRows('status');
  expect(await rows.count() === 1, `Atlas: expected one current status row, got ${await rows.count()}`);
  const row = await text(rows);
  expect(row.includes('general availability'), `Atlas status reads "${row}" after the override`);
  const badge = rows.locator('[data-testid="manual-badge"]');
  expect(await badge.count() === 1 && (await text(badge)) === 'manual', `Atlas status row has no "manual" badge: "${row}"`);
});

await step('merge two entities, then undo the merge: both pages are back', async () => {
  const sam = await findEntity('Sam');
  const bob = await findEntity('Bob Okafor');
  await visit(sam.href);
  expect(await entityName() === 'Sam', `Sam's page is named "${await entityName()}"`);
  expect((await entityBody()).includes('frontend design'), 'Sam\'s page does not show his skill "frontend design"');
  await visit(bob.href);
  expect(!(await entityBody()).includes('frontend design'), 'Bob\'s page already shows "frontend design"');
  const samId = sam.href.split('/').pop();
  const merge = page.locator('form[data-testid="merge-form"]');
  expect(await merge.count() === 1, 'Bob: no merge form');
  await fill(merge, 'other', samId);
  await submit(merge);
  expect(new URL(page.url()).pathname === bob.href, `merge: landed on ${page.url()}, expected ${bob.href}`);
  await flash();
  expect((await entityBody()).includes('frontend design'), 'after the merge Bob\'s page does not show Sam\'s "frontend design"');
  // The merge's own revision when the list says which is which; else the newest.
  const mergeRevision = page.locator('[data-testid="revision"]', { hasText: /merge/i }).first();
  const undo = (await mergeRevision.count()) === 1
    ? mergeRevision.locator('form[data-testid="undo-form"]')
    : page.locator('form[data-testid="undo-form"]').first();
  expect(await undo.count() === 1, 'Bob: no undo form among the recent revisions');
  await submit(undo);
  await flash();
  await visit(bob.href);
  expect(await entityName() === 'Bob Okafor', `after undo Bob's page is named "${await entityName()}"`);
  expect(!(await entityBody()).includes('frontend design'), 'after undo Bob\'s page still shows "frontend design"');
  await visit(sam.href);
  expect(await entityName() === 'Sam', `after undo Sam's page is named "${await entityName()}"`);
  expect((await entityBody()).includes('frontend design'), 'after undo Sam\'s page lost "frontend design"');
});

await step('graph: a node opens its entity, an edge opens the connection inspector', async () => {
  expect(aliceHref, 'no Alice page (an earlier step failed)');
  const aliceId = aliceHref.split('/').pop();
  await visit(aliceHref);
  const graphLink = page.locator(`a[href^="/graph/${aliceId}"]`).first();
  if (await graphLink.count() === 1) {
    await clickAndWait(graphLink);
  } else {
    await visit(`/graph/${aliceId}?hops=1`);
  }
  expect(new URL(page.url()).pathname === `/graph/${aliceId}`, `graph link opened ${page.url()}`);
  const svg = page.locator('svg[data-testid="graph"]');
  expect(await svg.count() === 1, 'graph: no svg[data-testid="graph"]');
  const nodes = page.locator('a[data-testid="graph-node"]');
  const edges = page.locator('a[data-testid="graph-edge"]');
  expect(await nodes.count() >= 2, `graph: ${await nodes.count()} nodes`);
  expect(await edges.count() >= 1, `graph: ${await edges.count()} edges`);
  await checkPage('graph');
  const graphUrl = page.url();
  const oneHop = await nodes.count();
  // Two hops reach further.
  const twoHopsLink = page.locator(`a[href="/graph/${aliceId}?hops=2"]`).first();
  if (await twoHopsLink.count() === 1) await clickAndWait(twoHopsLink);
  else await visit(`/graph/${aliceId}?hops=2`);
  const twoHops = await nodes.count();
  expect(twoHops > oneHop, `graph: 2 hops shows ${twoHops} nodes, 1 hop ${oneHop}`);
  await checkPage('graph-2-hops');
  await visit(graphUrl);
  // A node, by mouse.
  const atlas = nodes.filter({ hasText: 'Atlas' }).first();
  expect(await atlas.count() === 1, 'graph: no node labelled Atlas');
  await clickAndWait(atlas);
  expect(/\/entities\//.test(page.url()), `graph node opened ${page.url()}, expected an entity page`);
  expect(await entityName() === 'Atlas', `graph node opened "${await entityName()}"`);
  // An edge, by keyboard.
  await visit(graphUrl);
  const edge = edges.first();
  await edge.focus();
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  expect(
    new RegExp(`^/graph/${aliceId}/edge/[^/]+$`).test(new URL(page.url()).pathname),
    `graph edge opened ${page.url()}`,
  );
  const inspector = page.locator('[data-testid="edge-inspector"]');
  expect(await inspector.count() === 1, 'inspector: no [data-testid="edge-inspector"]');
  const body = await text(inspector);
  const predicates = [
    'applies_to_project', 'blocked_by', 'co_occurs_with', 'contributes_to', 'focuses_on_concept',
    'role', 'led_by_person', 'owned_by_company', 'owns_project', 'partners_with',
    'relates_to_concept', 'reports_to', 'tracks_concept', 'uses_project', 'works_at',
  ].map((p) => p.replace(/_/g, '[ _]'));
  expect(
    new RegExp(`\\b(has[ _])?(${predicates.join('|')})\\b`, 'i').test(body),
    `inspector names no relationship predicate: "${body.slice(0, 300)}"`,
  );
  expect(await inspector.locator('a[data-testid="evidence-chip"]').count() >= 1, 'inspector shows no evidence chip');
  await checkPage('inspector');
});

await step('review queue lists suggestions with accept and reject', async () => {
  await visit('/');
  const count = page.locator('[data-testid="review-count"]');
  const n = Number(((await text(count)).match(/\d+/) || ['NaN'])[0]);
  expect(n >= 1, `home review count reads "${await text(count)}", expected at least 1 (Beacon's conflict)`);
  const link = page.locator('a[href="/review"]').first();
  if (await link.count() === 1) await clickAndWait(link);
  else await visit('/review');
  const suggestions = page.locator('[data-testid="suggestion"]');
  expect(await suggestions.count() === n, `review: ${await suggestions.count()} suggestions, home said ${n}`);
  const first = suggestions.first();
  expect(await first.locator('form[data-testid="accept-form"]').count() === 1, 'suggestion has no accept form');
  expect(await first.locator('form[data-testid="reject-form"]').count() === 1, 'suggestion has no reject form');
  await checkPage('review');
});

await step('delete a meeting after the dry run: the page is gone and so is what only it supported', async () => {
  // Dana's title rests on one meeting only, the Atlas kickoff.
  const dana = await findEntity('Dana Ruiz');
  await visit(dana.href);
  const title = claimRows('title');
  expect(await title.count() === 1, `Dana: expected one current title row, got ${await title.count()}`);
  expect((await text(title)).includes('Engineering Manager'), `Dana's title reads "${await text(title)}"`);
  const chip = title.locator('a[data-testid="evidence-chip"]').first();
  expect((await text(chip)).includes('Atlas kickoff'), `Dana's title chip reads "${await text(chip)}"`);
  await clickAndWait(chip);
  const meeting = new URL(page.url()).pathname;
  const remove = page.locator('a[data-testid="delete-meeting"]');
  expect(await remove.count() === 1, 'meeting: no delete link');
  await clickAndWait(remove);
  expect(new URL(page.url()).pathname === `${meeting}/delete`, `delete opened ${page.url()}`);
  const items = page.locator('[data-testid="cascade-item"]');
  expect(await items.count() >= 1, 'delete confirmation lists no cascade items');
  const listed = (await items.allTextContents()).join(' | ');
  expect(listed.includes('Engineering Manager'), `the dry run does not mention Dana's title: ${listed.slice(0, 500)}`);
  await checkPage('delete-confirmation');
  // Nothing is deleted by looking.
  await visit(meeting);
  await visit(`${meeting}/delete`);
  const confirm = page.locator('form[data-testid="confirm-delete"]');
  expect(await confirm.count() === 1, 'delete confirmation has no confirm form');
  await submit(confirm);
  expect(new URL(page.url()).pathname === '/', `after delete landed on ${page.url()}, expected /`);
  await flash();
  await visit(meeting, 404);
  await visit(dana.href);
  const after = await claimRows('title').allTextContents();
  expect(
    !after.join(' ').includes('Engineering Manager'),
    `Dana still shows the title only the deleted meeting supported: ${after.join(' | ')}`,
  );
});

await step('no script errors, blocked scripts or missing assets on any page', async () => {
  expect(consoleProblems.length === 0, consoleProblems.join('\n'));
});

await step('accessibility: no serious or critical axe-core violations at 1280 and 390 px', async () => {
  expect(a11yFailures.length === 0, a11yFailures.join('\n'));
});

await browser.close();

const failed = results.filter((r) => !r.ok);
console.log(`\n${results.length - failed.length} of ${results.length} steps passed; pages checked: ${[...checkedPages].join(', ')}`);
console.log(`screenshots: ${shotDir}`);
process.exit(failed.length === 0 ? 0 : 1);
