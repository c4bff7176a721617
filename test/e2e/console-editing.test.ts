/**
 * Editing in the web console, clicked through in headless Chromium (support/browser.ts)
 * against a real relay with a delivery worker and real receivers on local ports: an
 * endpoint made and its URL shown, an event sent to it seen; a URL destination with basic
 * auth whose receiver gets the Authorization header; a destination paused (its event held)
 * and resumed; a transformation tested on an event from history (a failing one showing its
 * line), saved, and the next delivery transformed; a filter that skips; deletes that ask
 * first; an API key made and revoked; a member added; alert channels set and a test alert
 * received at the Slack URL. Each flow keeps a screenshot in test/artifacts/.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { browserSuite, launchBrowser } from '../support/browser.ts';
import { saveScreenshot, scrollsSideways, signInToConsole } from '../support/console.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startSmtpInbox, type SmtpInbox } from '../support/smtp-server.ts';
import { api, createEndpoint, sendEvent, signUp, startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let receiver: Receiver;
let slack: Receiver;
let inbox: SmtpInbox;
let browser: Browser | undefined;
let page: Page;
let key: string;
/** An endpoint delivering to the same receiver: an event sent to it after one to a paused destination, seen first, shows the other was held. */
let barrier: any;
/** The endpoint the console makes. */
let shop: any;
let destinationId: string;

beforeAll(async () => {
  inbox = await startSmtpInbox();
  relay = await startTestRelay({ retryScheduleMs: [50], allowPrivateDestinations: true, smtpUrl: inbox.url, alertEmailFrom: 'Hook alerts <alerts@hook.example.test>' }, { workerPollMs: 50 });
  receiver = await startReceiver(() => ({ status: 200, body: 'thanks' }));
  slack = await startReceiver(() => ({ status: 200, body: 'ok' }));
  ({ key } = await signUp(relay.baseUrl));
  barrier = await createEndpoint(relay.baseUrl, key, { name: 'barrier', destination: { type: 'url', url: `${receiver.url}/barrier` } });
}, 120_000);
browserSuite(async ({ watch }) => {
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: relay.baseUrl });
  page = await context.newPage();
  watch(page);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await slack?.close();
  await inbox?.close();
  await relay?.close();
});

const json = (body: unknown) => JSON.stringify(body);
const toShop = () => receiver.requests.filter((request) => request.url.startsWith('/hooks/shop'));
const card = () => page.locator(`.destination-card[data-destination-id="${destinationId}"]`);

async function deliveryOf(eventId: string): Promise<any> {
  const event = (await api(relay.baseUrl, 'GET', `/v1/events/${eventId}`, { key })).body;
  return event.deliveries.find((delivery: any) => delivery.destination_id === destinationId);
}

describe('editing in the console', () => {
  it('creates an endpoint and shows its URL and secret; an event sent to it appears', async () => {
    await signInToConsole(page, relay.baseUrl, key);

    await page.goto(`${relay.baseUrl}/console#/endpoints`);
    await page.click('#new-endpoint-form button[type="submit"]');
    // An empty name is refused beside the field, with the relay's words.
    await expect.poll(() => page.textContent('#new-endpoint-name-message')).toMatch(/\S/);
    expect(await page.getAttribute('#new-endpoint-name', 'aria-invalid')).toBe('true');

    await page.fill('#new-endpoint-name', 'shop');
    await page.click('#new-endpoint-form button[type="submit"]');
    await page.waitForSelector('#created-url');
    const endpoints = (await api(relay.baseUrl, 'GET', '/v1/endpoints', { key })).body.data;
    shop = endpoints.find((endpoint: any) => endpoint.name === 'shop');
    expect(await page.inputValue('#created-url')).toBe(shop.url);
    expect(await page.inputValue('#created-secret')).toBe((await api(relay.baseUrl, 'GET', `/v1/endpoints/${shop.id}/secret`, { key })).body.secret);
    await page.locator(`.endpoint[data-endpoint-id="${shop.id}"]`).waitFor();
    expect(await saveScreenshot(page, 'console-editing-new-endpoint')).toBeGreaterThan(5000);

    const eventId = await sendEvent(shop.url, json({ type: 'order.created', id: 1 }));
    await page.goto(`${relay.baseUrl}/console#/events`);
    await page.locator(`#event-list [data-event-id="${eventId}"]`).waitFor();
  });

  it('adds a URL destination with basic auth: its receiver gets the Authorization header', async () => {
    await page.goto(`${relay.baseUrl}/console#/endpoints/${shop.id}`);
    await page.click('.add-destination');
    await page.fill('#add-destination-url', `${receiver.url}/shop`);
    await page.selectOption('#add-destination-auth-type', 'basic');
    await page.fill('#add-destination-auth-username', 'hook');
    await page.fill('#add-destination-auth-password', 's3cret');
    await page.click('#add-destination button[type="submit"]');
    await expect.poll(() => page.locator('.destination-card').count()).toBe(2);
    const destinations = (await api(relay.baseUrl, 'GET', `/v1/endpoints/${shop.id}/destinations`, { key })).body.data;
    destinationId = destinations[1].id;
    expect(destinations[1].auth).toEqual({ type: 'basic', username: 'hook', secret_set: true });
    expect(await card().textContent()).toContain('auth basic (hook)');

    await sendEvent(shop.url, json({ type: 'order.created', id: 2 }));
    await expect.poll(() => toShop().length).toBe(1);
    expect(toShop()[0]!.headers.authorization).toBe(`Basic ${Buffer.from('hook:s3cret').toString('base64')}`);
  });

  it('refuses a destination the relay would not send to, beside the field', async () => {
    await page.click('.add-destination');
    await page.fill('#add-destination-url', 'ftp://example.com/x');
    await page.click('#add-destination button[type="submit"]');
    await expect.poll(() => page.textContent('#add-destination-url-message')).toMatch(/http/);
    expect(await page.getAttribute('#add-destination-url', 'aria-invalid')).toBe('true');
    await page.click('#add-destination button:has-text("Cancel")');
  });

  it('pauses a destination (its deliveries wait) and resumes it (they go)', async () => {
    await card().locator('.pause-destination').click();
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', `/v1/destinations/${destinationId}`, { key })).body.status).toBe('paused');
    await card().locator('.resume-destination').waitFor();
    expect(await card().locator('.status').textContent()).toBe('paused');

    const held = await sendEvent(shop.url, json({ type: 'order.created', id: 3 }));
    const barrierEvent = await sendEvent(barrier.url, json({ type: 'barrier' }));
    await expect.poll(() => receiver.requests.some((request) => request.headers['webhook-id'] === barrierEvent)).toBe(true);
    expect(toShop().some((request) => request.headers['webhook-id'] === held)).toBe(false);
    expect((await deliveryOf(held)).status).toBe('pending');

    await card().locator('.resume-destination').click();
    await expect.poll(() => toShop().some((request) => request.headers['webhook-id'] === held)).toBe(true);
    await expect.poll(() => card().locator('.status').textContent()).toBe('active');
  });

  it('tests a transformation on an event from history, shows the result and the failing line, saves it, and the next delivery is transformed', async () => {
    await page.reload();
    await card().locator('.rules-details summary').click();
    const code = card().locator('.transformation-code');
    await code.fill([
      "addHandler('transform', (request) => {",
      "  throw new Error('not yet');",
      '});',
    ].join('\n'));
    // The newest event of the endpoint is picked; its body was {type: 'order.created', id: 3}.
    expect(await card().locator('.test-source option').first().textContent()).toContain('order.created');
    await card().locator('.test-rules').click();
    await expect.poll(() => card().locator('.transform-error').textContent()).toMatch(/line 2.*not yet/);
    expect(await card().locator('.line-numbers li.error-line').textContent()).toBe('2');
    // Code that does not compile is refused on save, the relay's message beside the code and its line marked.
    await code.fill(["addHandler('transform', (request) => {", '  return request;;;', '  +', '});'].join('\n'));
    await card().locator('.save-rules').click();
    await expect.poll(() => card().locator('[id$="-code-message"]').textContent()).toMatch(/line \d+/);
    expect(await card().locator('.line-numbers li.error-line').count()).toBe(1);
    expect((await api(relay.baseUrl, 'GET', `/v1/destinations/${destinationId}`, { key })).body.transformation).toBeNull();

    await code.fill([
      "addHandler('transform', (request) => {",
      "  request.headers['x-transformed'] = 'yes';",
      '  request.body = { wrapped: request.body };',
      '  return request;',
      '});',
    ].join('\n'));
    await card().locator('.test-rules').click();
    await expect.poll(async () => JSON.parse(await card().locator('.transform-body').textContent() ?? 'null')).toEqual({ wrapped: { type: 'order.created', id: 3 } });
    expect(await card().locator('.transform-headers').textContent()).toContain('x-transformed: yes');
    // Nothing is saved by a test.
    expect((await api(relay.baseUrl, 'GET', `/v1/destinations/${destinationId}`, { key })).body.transformation).toBeNull();
    expect(await saveScreenshot(page, 'console-editing-transformation')).toBeGreaterThan(5000);

    await card().locator('.save-rules').click();
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', `/v1/destinations/${destinationId}`, { key })).body.transformation?.code).toContain('wrapped');
    const before = toShop().length;
    const sent = await sendEvent(shop.url, json({ type: 'order.paid', id: 4 }));
    await expect.poll(() => toShop().length).toBe(before + 1);
    const delivered = toShop().at(-1)!;
    expect(delivered.headers['webhook-id']).toBe(sent);
    expect(delivered.headers['x-transformed']).toBe('yes');
    expect(JSON.parse(delivered.body.toString())).toEqual({ wrapped: { type: 'order.paid', id: 4 } });
  });

  it('sets a filter that skips: the test says so, and after saving such an event is filtered', async () => {
    const filter = card().locator('.filter-json');
    await filter.fill('{"body": {"wrapped": {"type": "order.created"}');
    await card().locator('.test-rules').click();
    await expect.poll(() => card().locator('[id$="-filter-message"]').textContent()).toMatch(/not valid JSON/);

    await filter.fill(json({ body: { wrapped: { type: 'order.created' } } }));
    await card().locator('.test-source').selectOption('pasted');
    await card().locator('.pasted-json').fill(json({ type: 'order.refunded' }));
    await card().locator('.test-rules').click();
    await expect.poll(() => card().locator('.filter-verdict').textContent()).toContain('would be skipped');
    await card().locator('.pasted-json').fill(json({ type: 'order.created' }));
    await card().locator('.test-rules').click();
    await expect.poll(() => card().locator('.filter-verdict').textContent()).toContain('would be delivered');

    await card().locator('.save-rules').click();
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', `/v1/destinations/${destinationId}`, { key })).body.filter).toEqual({ body: { wrapped: { type: 'order.created' } } });
    const skipped = await sendEvent(shop.url, json({ type: 'order.refunded', id: 5 }));
    await expect.poll(async () => (await deliveryOf(skipped))?.status).toBe('filtered');
    const passed = await sendEvent(shop.url, json({ type: 'order.created', id: 6 }));
    await expect.poll(() => toShop().some((request) => request.headers['webhook-id'] === passed)).toBe(true);
    expect(toShop().some((request) => request.headers['webhook-id'] === skipped)).toBe(false);
  });

  it('the endpoint page, with the destination form, the rules editor and a confirm dialog open, has no serious or critical axe-core violation, light or dark', async () => {
    const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    await page.click('.add-destination');
    await page.selectOption('#add-destination-auth-type', 'oauth2');
    for (const summary of await page.locator('.destination-form details summary').all()) await summary.click();
    const found: string[] = [];
    for (const theme of ['light', 'dark']) {
      await page.evaluate((value) => { (globalThis as any).document.documentElement.dataset.theme = value; }, theme);
      // Evaluated through the DevTools protocol, which the page's CSP does not govern.
      await page.evaluate(axeSource);
      const results = await page.evaluate(async () => (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] }));
      found.push(...results.violations.filter((violation: { impact: string }) => violation.impact === 'serious' || violation.impact === 'critical')
        .map((violation: { id: string; nodes: { target: string[] }[] }) => `${theme}: ${violation.id} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`));
    }
    expect(await saveScreenshot(page, 'console-editing-endpoint-dark')).toBeGreaterThan(5000);
    await page.evaluate(() => { delete (globalThis as any).document.documentElement.dataset.theme; });
    await card().locator('.delete-destination').click();
    await page.evaluate(axeSource);
    const dialog = await page.evaluate(async () => (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] }));
    found.push(...dialog.violations.filter((violation: { impact: string }) => violation.impact === 'serious' || violation.impact === 'critical').map((violation: { id: string }) => `dialog: ${violation.id}`));
    await page.keyboard.press('Escape');
    // Nothing scrolls sideways on a phone, the form and the rules editor open.
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await scrollsSideways(page)).toBe(false);
    expect(await saveScreenshot(page, 'console-editing-endpoint-375')).toBeGreaterThan(5000);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.click('#add-destination button:has-text("Cancel")');
    expect(found).toEqual([]);
  });

  it('asks before deleting a destination (Esc cancels) and an endpoint, then deletes them', async () => {
    await card().locator('.delete-destination').click();
    const dialog = page.locator('dialog[open]');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('Deliveries to it not yet made become failed');
    expect(await saveScreenshot(page, 'console-editing-confirm')).toBeGreaterThan(5000);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('dialog[open]').count()).toBe(0);
    expect((await api(relay.baseUrl, 'GET', `/v1/endpoints/${shop.id}/destinations`, { key })).body.data).toHaveLength(2);

    await card().locator('.delete-destination').click();
    await page.locator('dialog[open] .dialog-confirm').click();
    await expect.poll(() => page.locator('.destination-card').count()).toBe(1);
    expect((await api(relay.baseUrl, 'GET', `/v1/endpoints/${shop.id}/destinations`, { key })).body.data).toHaveLength(1);

    await page.locator('.endpoint-detail .delete-endpoint').click();
    const ask = page.locator('dialog[open]');
    expect(await ask.textContent()).toContain('stops receiving');
    expect(await ask.textContent()).toContain('Its events stay in the history');
    await ask.locator('.dialog-confirm').click();
    await expect.poll(() => page.url()).toMatch(/#\/endpoints$/);
    expect((await api(relay.baseUrl, 'GET', `/v1/endpoints/${shop.id}`, { key })).status).toBe(404);
    expect((await fetch(shop.url, { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('renames, pauses and resumes an endpoint from the list', async () => {
    const row = page.locator(`.endpoint[data-endpoint-id="${barrier.id}"]`);
    await row.locator('.rename-endpoint').click();
    await row.locator('input[name="name"]').fill('barrier-renamed');
    await row.locator('.rename-form button[type="submit"]').click();
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', `/v1/endpoints/${barrier.id}`, { key })).body.name).toBe('barrier-renamed');
    expect(await row.locator('.endpoint-name').textContent()).toBe('barrier-renamed');
    await row.locator('.pause-endpoint').click();
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', `/v1/endpoints/${barrier.id}`, { key })).body.status).toBe('paused');
    await row.locator('.resume-endpoint').click();
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', `/v1/endpoints/${barrier.id}`, { key })).body.status).toBe('active');
  });

  it('sets ingest settings: dedupe drops a repeat, a custom response answers, verification refuses an unsigned request and is turned off after asking', async () => {
    await page.goto(`${relay.baseUrl}/console#/endpoints/${barrier.id}`);
    const at = (form: string, name: string) => `#${form}-${barrier.id}-${name}`;
    const endpoint = async () => (await api(relay.baseUrl, 'GET', `/v1/endpoints/${barrier.id}`, { key })).body;

    await page.fill(at('dedupe', 'header'), 'x-delivery-id');
    await page.click('#setting-dedupe-form button[type="submit"]');
    await expect.poll(async () => (await endpoint()).dedupe).toEqual({ header: 'x-delivery-id' });
    const send = () => fetch(barrier.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-delivery-id': 'd-1' }, body: '{}' });
    const first = await (await send()).json() as { id: string };
    expect(await (await send()).json()).toEqual({ id: first.id, status: 'duplicate' });

    await page.fill(at('response', 'status'), '202');
    await page.fill(at('response', 'body'), 'got {{event_id}}');
    await page.click('#setting-response-form button[type="submit"]');
    await expect.poll(async () => (await endpoint()).response?.status).toBe(202);
    const answered = await fetch(barrier.url, { method: 'POST', body: '{"n":2}' });
    expect(answered.status).toBe(202);
    expect(await answered.text()).toMatch(/^got evt_/);

    // The secret is needed on every save: said beside the field before anything is sent.
    await page.click('#setting-verification-form button[type="submit"]');
    await expect.poll(() => page.textContent(`${at('verification', 'secret')}-message`)).toContain('signing secret');
    await page.fill(at('verification', 'secret'), 'gh-secret-1234');
    await page.click('#setting-verification-form button[type="submit"]');
    await expect.poll(async () => (await endpoint()).verification?.secret_hint).toBe('1234');
    // the page clears the write-only field once the save's answer arrives, which can be after the API shows it
    await expect.poll(() => page.inputValue(at('verification', 'secret'))).toBe('');
    await expect.poll(() => page.textContent('.setting-verification .setting-current')).toContain('github');
    expect((await fetch(barrier.url, { method: 'POST', body: '{"n":3}' })).status).toBe(401);
    expect(await saveScreenshot(page, 'console-editing-settings')).toBeGreaterThan(5000);

    await page.click('.turn-off-verification');
    await page.locator('dialog[open] .dialog-confirm').click();
    await expect.poll(async () => (await endpoint()).verification).toBeNull();
    expect((await fetch(barrier.url, { method: 'POST', body: '{"n":4}' })).status).toBe(202);
  });

  it('creates an API key (shown once) and revokes it after asking', async () => {
    await page.goto(`${relay.baseUrl}/console#/account`);
    await page.fill('#new-key-name', 'ci');
    await page.click('#new-key-form button[type="submit"]');
    await page.waitForSelector('#created-key');
    const created = await page.inputValue('#created-key');
    expect(created).toMatch(/^hk_/);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key: created })).status).toBe(200);
    const ci = (await api(relay.baseUrl, 'GET', '/v1/api-keys', { key })).body.data.find((listed: any) => listed.name === 'ci');
    const row = page.locator(`#keys tr[data-key-id="${ci.id}"]`);
    await row.waitFor();
    expect(await row.locator('td').first().textContent()).toBe('ci');

    await row.locator('.revoke-key').click();
    await page.locator('dialog[open] .dialog-confirm').click();
    await expect.poll(() => row.count()).toBe(0);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key: created })).status).toBe(401);
  });

  it('adds a member, whose first key is shown once, and changes their role', async () => {
    await page.fill('#new-member-email', 'dev@example.com');
    await page.click('#new-member-form button[type="submit"]');
    await page.waitForSelector('#created-member-key');
    expect(await page.inputValue('#created-member-key')).toMatch(/^hk_/);
    await expect.poll(() => page.locator('#members tbody tr').count()).toBe(2);
    const members = (await api(relay.baseUrl, 'GET', '/v1/members', { key })).body.data;
    const dev = members.find((member: any) => member.email === 'dev@example.com');
    expect(dev.role).toBe('member');
    await page.locator(`#members tr[data-member-id="${dev.id}"] .member-role`).selectOption('admin');
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', `/v1/members/${dev.id}`, { key })).body.role).toBe('admin');
  });

  it('sets the Slack and email alert channels and sends a test alert to each', async () => {
    await page.waitForSelector('#alerts-form');
    await page.fill('#alerts-slack', 'not a url');
    await page.click('#alerts-form button[type="submit"]');
    await expect.poll(() => page.textContent('#alerts-slack-message')).toMatch(/\S/);

    await page.fill('#alerts-slack', `${slack.url}/services/T000/B000/XYZ1`);
    await page.fill('#alerts-email', 'not-an-address');
    await page.click('#alerts-form button[type="submit"]');
    await expect.poll(() => page.textContent('#alerts-email-message')).toMatch(/\S/);
    await page.fill('#alerts-email', 'ops@example.com, oncall@example.com');
    await page.click('#alerts-form button[type="submit"]');
    await expect.poll(() => page.textContent('#alert-slack')).toContain('XYZ1');
    expect(await page.textContent('#alert-email')).toBe('ops@example.com, oncall@example.com');
    expect((await api(relay.baseUrl, 'GET', '/v1/account/alerts', { key })).body.slack).not.toBeNull();
    await page.click('#send-test-alert');
    await slack.waitFor(1);
    expect(slack.requests[0]!.url).toBe('/hooks/services/T000/B000/XYZ1');
    expect(JSON.parse(slack.requests[0]!.body.toString()).text).toMatch(/\S/);
    await expect.poll(() => inbox.messages.length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(inbox.messages[0]!.to.sort()).toEqual(['oncall@example.com', 'ops@example.com']);
    await page.reload();
    await expect.poll(() => page.locator('#recent-alerts tbody tr').count()).toBeGreaterThan(0);
    expect(await saveScreenshot(page, 'console-editing-account')).toBeGreaterThan(5000);
  });

  it('shows a member who is not an admin the team and alerts read-only, saying an admin can change them', async () => {
    const added = (await api(relay.baseUrl, 'POST', '/v1/members', { key, json: { email: 'viewer@example.com', role: 'member' } })).body;
    // The same page signs out and in again: the test Chromium runs as one process, which a second context can crash.
    await page.click('#sign-out');
    await page.waitForSelector('#signin-form');
    await page.fill('#api-key', added.api_key);
    await page.press('#api-key', 'Enter');
    await page.waitForSelector('#sign-out');
    await page.goto(`${relay.baseUrl}/console#/account`);
    await page.waitForSelector('#alert-slack');
    await expect.poll(() => page.locator('#members tbody tr').count()).toBe(3);
    expect(await page.locator('#new-member-form, #alerts-form, .remove-member, .member-role').count()).toBe(0);
    expect(await page.textContent('#alerts')).toContain('Only an admin');
    expect(await page.textContent('#alert-slack')).toContain('XYZ1');
    // Their own key can be revoked; the admin's cannot from here.
    await expect.poll(() => page.locator('#keys tbody tr').count()).toBe(3); // the admin's, dev's and theirs
    expect(await page.locator('#keys .revoke-key').count()).toBe(1);
  });
});
