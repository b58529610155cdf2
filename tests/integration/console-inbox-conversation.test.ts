import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { useBrowser } from '../support/browser.ts';
import { givePassword, signInToConsole, useScreenshots, waitForValue } from '../support/console.ts';
import { useTestService } from '../support/service.ts';
import { connectHelpdesk, type TestSocket } from '../support/socket.ts';
import { conversationFromContact, eventually, injectContactMessage, sentToContact, setInboxMembers, useHelpdeskWorkspace } from '../support/helpdesk.ts';
import { HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * Issue 23 item 2, the conversation as an agent works it in the console, in Chromium against a
 * real service: an Agent opens a conversation by its address, sees the contact write live,
 * replies with a canned response picked with `/` and follows its status to READ, writes a
 * private note mentioning a colleague (who is notified), attaches a file, assigns, labels, sets
 * the priority, snoozes, resolves by key, reopens, runs a macro and edits the contact; a
 * colleague's real Socket.IO client sees the typing and the page shows the colleague's.
 */
const service = useTestService();
const hd = useHelpdeskWorkspace(service, { connection: 'Support line', inbox: 'Support', manualAssignment: true });
const browser = useBrowser();
const screenshot = useScreenshots('inbox-conversation');

const CONTACT = '+5511977770001';
const CONTACT_CHAT = '5511977770001';
/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

let colleague: { userId: string; email: string; token: string; name: string };
let agentName = '';
let conversationId = '';
let teamId = '';
let socket: TestSocket | undefined;

beforeAll(async () => {
  await givePassword(service, hd.agent.userId);
  const member = await memberWithToken(service, hd.owner, 'AGENT');
  await setInboxMembers(service, hd.owner.token, hd.inboxId, [hd.agent.userId, member.userId]);
  const members = (await api('GET', '/v3/members?per_page=100')).body.data as Array<{ userId: string; name: string }>;
  colleague = { ...member, name: members.find((m) => m.userId === member.userId)!.name };
  agentName = members.find((m) => m.userId === hd.agent.userId)!.name;
  expect((await api('POST', '/v3/helpdesk/canned-responses', { shortCode: 'shipping', content: 'Your parcel ships today.' })).status).toBe(201);
  expect((await api('POST', '/v3/helpdesk/canned-responses', { shortCode: 'thanks', content: 'Thank you for writing.' })).status).toBe(201);
  const macro = await api('POST', '/v3/helpdesk/macros', {
    name: 'Escalate',
    visibility: 'workspace',
    actions: [
      { type: 'set_priority', priority: 'URGENT' },
      { type: 'add_labels', labels: ['escalated'] },
    ],
  });
  expect(macro.status).toBe(201);
  const team = await api('POST', '/v3/helpdesk/teams', { name: 'Deliveries' });
  expect(team.status).toBe(201);
  teamId = team.body.id;
  expect((await api('PUT', `/v3/helpdesk/teams/${teamId}/members`, { userIds: [hd.agent.userId, member.userId] })).status).toBe(200);
  const conversation = await conversationFromContact(service, hd.owner.token, hd.connectionId, CONTACT, { pushName: 'Beatriz Lima', text: 'Hello, where is my parcel?' });
  conversationId = conversation.id;
}, HOOK_TIMEOUT);

afterAll(() => socket?.close());

function api(method: string, path: string, body?: unknown, apikey = hd.owner.token) {
  return service.call(method, path, { apikey, body });
}

const conversationNowOf = async (id: string) => (await api('GET', `/v3/helpdesk/conversations/${id}`)).body;
const conversationNow = () => conversationNowOf(conversationId);
const conversationWhen = (done: (c: any) => boolean, what: string) => eventually(async () => ((c) => (done(c) ? c : undefined))(await conversationNow()), what);
/** A list answer's items, bare array or page envelope. */
const itemsOfBody = (body: any): any[] => (Array.isArray(body) ? body : (body?.data ?? []));
const thread = (page: Page) => page.locator('#conversation-messages');
const composer = (page: Page) => page.locator('#composer-text');
/** The conversation's own controls (the list beside it has filters of the same names). */
const actions = (page: Page) => page.getByRole('group', { name: 'Conversation actions' });

describe('working a conversation in the console', () => {
  test('an Agent reads, replies, notes, attaches and acts, live', async () => {
    await browser.withPage(async (page) => {
      await page.setViewportSize({ width: 1280, height: 860 });
      await signInToConsole(page, service, hd.agent.email, undefined, `/inbox/${conversationId}`);
      await thread(page).getByText('Hello, where is my parcel?').waitFor();
      await page.getByRole('heading', { name: /Beatriz Lima · #\d+/ }).waitFor();

      // Opening it marks it read (unassigned: anyone's read counts) and tells colleagues how far.
      await conversationWhen((c) => c.assigneeLastSeenAt !== null, 'the read marker');

      // A colleague's client on the conversation hears this Agent type; the page shows the colleague typing.
      socket = await connectHelpdesk(service.url, colleague.token, { transports: ['websocket'] });
      expect(await socket.ask('subscribe:conversation', { conversationId })).toEqual({ ok: true });

      // The contact writes again: it appears without a reload, and is read again.
      const before = (await conversationNow()).assigneeLastSeenAt;
      expect((await injectContactMessage(service, hd.owner.token, hd.connectionId, { from: CONTACT_CHAT, text: 'It was due yesterday.' })).status).toBe(201);
      await thread(page).getByText('It was due yesterday.').waitFor();
      await conversationWhen((c) => c.assigneeLastSeenAt > before, 'the read marker moving on');
      const read = await socket.next('read:up_to', (p) => p.conversationId === conversationId && p.userId === hd.agent.userId);
      expect(typeof read.messageId).toBe('string');

      await composer(page).click();
      await composer(page).pressSequentially('Let me');
      const typing = await socket.next('typing:start', (p) => p.conversationId === conversationId);
      expect(typing.userId).toBe(hd.agent.userId);
      socket.socket.emit('typing:start', { conversationId });
      await page.getByText(`${colleague.name} is typing…`).waitFor();
      socket.socket.emit('typing:stop', { conversationId });
      await page.getByText(`${colleague.name} is typing…`).waitFor({ state: 'detached' });
      await composer(page).fill('');

      // `/` opens the canned responses; typed letters filter them; Enter takes one, Enter sends.
      await composer(page).pressSequentially('/ship');
      const options = page.getByRole('listbox', { name: 'Canned responses' }).getByRole('option');
      await options.filter({ hasText: '/shipping' }).waitFor();
      await options.nth(1).waitFor({ state: 'detached' });
      expect(await options.count()).toBe(1);
      await screenshot(page, 'canned-picker');
      await composer(page).press('Enter');
      await waitForValue(composer(page), 'Your parcel ships today.');
      await composer(page).press('Enter');
      const reply = thread(page).getByRole('listitem', { name: /^Reply from .*Your parcel ships today\./ });
      await reply.getByText('SENT').waitFor();
      // Emptied once the service took it (before it went out).
      expect(await composer(page).inputValue()).toBe('');

      // The contact's phone reports it delivered, then read: the status moves on the page.
      const sent = await sentToContact(service, hd.owner.token, hd.connectionId, CONTACT_CHAT, 'Your parcel ships today.');
      expect((await api('POST', `/v3/connections/${hd.connectionId}/sandbox/receipts`, { messageId: sent.id, status: 'DELIVERED' })).status).toBe(201);
      await reply.getByText('DELIVERED').waitFor();
      expect((await api('POST', `/v3/connections/${hd.connectionId}/sandbox/receipts`, { messageId: sent.id, status: 'READ' })).status).toBe(201);
      await reply.getByText('READ', { exact: true }).waitFor();

      // Escape leaves the composer; `n` is a private note; `@` picks a member, written canonically.
      await composer(page).press('Escape');
      await page.keyboard.press('n');
      await page.getByRole('button', { name: 'Private note', pressed: true }).waitFor();
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('composer-text');
      await composer(page).pressSequentially(`Please check this @${colleague.name.slice(0, -2)}`);
      await page.getByRole('listbox', { name: 'Mention a member' }).getByRole('option', { name: new RegExp(colleague.name) }).waitFor();
      await screenshot(page, 'mention-picker');
      await composer(page).press('Enter');
      await waitForValue(composer(page), `@[${colleague.name}](user:${colleague.userId}) `);
      await composer(page).pressSequentially('thanks');
      await composer(page).press('Enter');
      const note = thread(page).getByRole('listitem', { name: /^Private note from/ });
      await note.locator(`.mention[data-user-id="${colleague.userId}"]`).waitFor();
      expect(await note.locator('.mention').textContent()).toBe(`@${colleague.name}`);
      const notified = await eventually(async () => {
        const list = (await api('GET', '/v3/helpdesk/notifications', undefined, colleague.token)).body.data as any[];
        return list.find((n) => n.notificationType === 'mention' && n.conversationId === conversationId);
      }, 'the mention notification');
      expect(notified.secondaryActorId).toBe(hd.agent.userId);

      // A file: uploaded, then sent with a note; the image shows inline.
      await page.locator('.composer input[type=file]').setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: PNG });
      await page.getByRole('list', { name: 'Files to send' }).getByText('receipt.png').waitFor();
      await composer(page).fill('The receipt');
      await composer(page).press('Enter');
      await thread(page).getByRole('img', { name: 'receipt.png' }).waitFor();
      const withFile = await eventually(async () => {
        const list = (await api('GET', `/v3/helpdesk/conversations/${conversationId}/messages?limit=100`)).body as any[];
        return list.find((m) => m.attachments.length > 0);
      }, 'the message with the file');
      expect(withFile).toMatchObject({ private: true, content: 'The receipt', attachments: [{ fileName: 'receipt.png', mimeType: 'image/png' }] });
      // A reply takes one file, sent to the contact as a document with the text as its caption.
      await page.getByRole('button', { name: 'Reply', exact: true }).click();
      await page.locator('.composer input[type=file]').setInputFiles({ name: 'invoice.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4 test invoice') });
      await page.getByRole('list', { name: 'Files to send' }).getByText('invoice.pdf').waitFor();
      await composer(page).fill('Your invoice');
      await composer(page).press('Enter');
      const withDocument = thread(page).getByRole('listitem', { name: /^Reply from .*Your invoice/ });
      await withDocument.getByRole('link', { name: /invoice\.pdf/ }).waitFor();
      await withDocument.getByText('SENT').waitFor();
      await sentToContact(service, hd.owner.token, hd.connectionId, CONTACT_CHAT, 'Your invoice');
      await screenshot(page, 'conversation');

      // Assign to the colleague, a new label, a priority: each checked through the API.
      await actions(page).getByLabel('Assignee').selectOption(colleague.userId);
      await conversationWhen((c) => c.assigneeUserId === colleague.userId, 'the assignee');
      await page.locator('summary', { hasText: 'Labels' }).click();
      await page.getByPlaceholder('New label').fill('vip');
      await page.getByRole('group', { name: 'Labels' }).getByRole('button', { name: 'Add' }).click();
      await conversationWhen((c) => c.labels.includes('vip'), 'the label');
      await page.getByRole('group', { name: 'Labels' }).getByRole('checkbox', { name: 'vip', checked: true }).waitFor();
      await page.locator('summary', { hasText: 'Labels' }).click();
      await actions(page).getByLabel('Team').selectOption(teamId);
      await conversationWhen((c) => c.teamId === teamId && c.assigneeUserId === colleague.userId, 'the team');
      await actions(page).getByLabel('Priority').selectOption('HIGH');
      await conversationWhen((c) => c.priority === 'HIGH', 'the priority');

      // Snooze for an hour from the presets.
      await page.locator('summary', { hasText: 'Snooze' }).click();
      await screenshot(page, 'snooze-menu');
      const asked = Date.now();
      await page.getByRole('group', { name: 'Snooze until' }).getByRole('button', { name: '1 hour' }).click();
      const snoozed = await conversationWhen((c) => c.status === 'SNOOZED', 'the snooze');
      const until = new Date(snoozed.snoozedUntil).getTime();
      expect(until).toBeGreaterThan(asked + 55 * 60_000);
      expect(until).toBeLessThan(asked + 65 * 60_000);

      // `e` resolves (focus outside any field), the button reopens.
      await page.locator('.conversation-head h2').click();
      await page.keyboard.press('e');
      await conversationWhen((c) => c.status === 'RESOLVED', 'the resolve');
      await page.getByRole('button', { name: 'Reopen' }).click();
      await conversationWhen((c) => c.status === 'OPEN', 'the reopen');
      await page.getByRole('button', { name: 'Resolve' }).waitFor();

      // A macro: its actions land together.
      await page.locator('summary', { hasText: 'Macros' }).click();
      await page.getByRole('group', { name: 'Run a macro' }).getByRole('button', { name: 'Escalate' }).click();
      await conversationWhen((c) => c.priority === 'URGENT' && c.labels.includes('escalated') && c.labels.includes('vip'), 'the macro');
      await page.locator('.label-chip', { hasText: 'escalated' }).waitFor();

      // The contact's panel: edit the name and a custom attribute.
      const panel = page.getByRole('complementary', { name: 'Contact' });
      await panel.getByRole('button', { name: 'Edit contact' }).click();
      await panel.getByLabel('Name').fill('Beatriz Lima Souza');
      await panel.getByRole('button', { name: 'Add attribute' }).click();
      await panel.getByLabel('Attribute 1 name').fill('plan');
      await panel.getByLabel('Attribute 1 value').fill('gold');
      await panel.getByRole('button', { name: 'Save contact' }).click();
      await panel.getByText('gold').waitFor();
      const contact = (await api('GET', `/v3/helpdesk/contacts/${(await conversationNow()).contactId}`)).body;
      expect(contact).toMatchObject({ name: 'Beatriz Lima Souza', customAttributes: { plan: 'gold' } });
      // Notes about the contact: a section only where the service has them (404: none).
      const notesAnswer = await api('GET', `/v3/helpdesk/contacts/${contact.id}/notes`);
      const notes = panel.getByRole('region', { name: 'Contact notes' });
      if (notesAnswer.status === 404) {
        await panel.getByRole('region', { name: 'Other conversations' }).waitFor();
        expect(await notes.count()).toBe(0);
      } else {
        await notes.getByLabel('New note about the contact').fill('Prefers WhatsApp to email.');
        await notes.getByRole('button', { name: 'Save note' }).click();
        await notes.getByText('Prefers WhatsApp to email.').waitFor();
        const saved = itemsOfBody((await api('GET', `/v3/helpdesk/contacts/${contact.id}/notes`)).body);
        expect(saved.map((n: any) => n.content)).toContain('Prefers WhatsApp to email.');
      }
      await screenshot(page, 'conversation-worked');

      // The panel folds away and comes back.
      await page.getByRole('button', { name: 'Hide contact' }).click();
      await panel.waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Show contact' }).click();
      await panel.waitFor();
    });
  });

  test('a failed reply says why, the contact\'s other conversations are listed, and the FREE plan\'s refusal reads as its hint', async () => {
    // A contact not on the network (999…): the reply fails, with the provider's reason.
    const unreachable = '+9995550001';
    const first = await conversationFromContact(service, hd.owner.token, hd.connectionId, unreachable, { pushName: 'Nobody Home', text: 'Anyone there?' });
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, hd.agent.email, undefined, `/inbox/${first.id}`);
      await thread(page).getByText('Anyone there?').waitFor();
      await page.getByRole('heading', { name: /#\d+/ }).click();
      await page.keyboard.press('r');
      await page.getByRole('button', { name: 'Reply', exact: true, pressed: true }).waitFor();
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('composer-text');
      // The canned list: arrow keys move, Escape closes it (the text stays), Enter takes.
      await composer(page).pressSequentially('/');
      const canned = page.getByRole('listbox', { name: 'Canned responses' });
      await canned.getByRole('option', { name: /\/thanks/ }).waitFor();
      expect(await canned.getByRole('option').count()).toBe(2);
      await composer(page).press('ArrowDown');
      await canned.getByRole('option', { name: /\/thanks/, selected: true }).waitFor();
      await composer(page).press('Escape');
      await canned.waitFor({ state: 'detached' });
      expect(await composer(page).inputValue()).toBe('/');
      await composer(page).pressSequentially('th');
      await canned.getByRole('option', { name: /\/thanks/, selected: true }).waitFor();
      await composer(page).press('Enter');
      await waitForValue(composer(page), 'Thank you for writing.');
      await composer(page).fill('');
      await composer(page).pressSequentially('We are looking into it.');
      await composer(page).press('Enter');
      const reply = thread(page).getByRole('listitem', { name: /^Reply from .*We are looking into it\./ });
      await reply.getByText('FAILED').waitFor();
      const failed = await eventually(async () => {
        const list = (await api('GET', `/v3/helpdesk/conversations/${first.id}/messages?limit=100`)).body as any[];
        return list.find((m) => m.content === 'We are looking into it.' && m.status === 'FAILED');
      }, 'the failed reply');
      expect(failed.externalError).toBeTruthy();
      await reply.getByText(failed.externalError).waitFor();
      await screenshot(page, 'failed-reply');

      // Resolved, then the contact writes again: a new conversation, whose panel lists the first.
      expect((await api('POST', `/v3/helpdesk/conversations/${first.id}/status`, { status: 'RESOLVED' })).status).toBe(201);
      expect((await injectContactMessage(service, hd.owner.token, hd.connectionId, { from: unreachable.slice(1), text: 'Hello again' })).status).toBe(201);
      const second = await eventually(async () => {
        const list = (await api('GET', '/v3/helpdesk/conversations?per_page=100')).body.data as any[];
        return list.find((c) => c.contactId === first.contactId && c.id !== first.id);
      }, 'the second conversation');
      await page.goto(page.url().replace(first.id, second.id));
      await thread(page).getByText('Hello again').waitFor();
      const others = page.getByRole('region', { name: 'Other conversations' });
      await others.getByRole('link', { name: `#${first.displayId}` }).waitFor();
      expect(await others.getByRole('link').count()).toBe(1);

      // The workspace drops to FREE: a write is refused with the plan's own words.
      const db = service.runtime.ctx.db;
      await db.updateTable('workspaces').set({ plan: 'FREE' }).where('id', '=', hd.owner.workspaceId).execute();
      try {
        const refused = await api('POST', `/v3/helpdesk/conversations/${second.id}/status`, { status: 'RESOLVED' }, hd.agent.token);
        expect(refused.status).toBe(403);
        await page.getByRole('button', { name: 'Resolve' }).click();
        await page.getByRole('alert').filter({ hasText: refused.body.hint }).waitFor();
        expect((await conversationNowOf(second.id)).status).toBe('OPEN');
        await screenshot(page, 'plan-refusal');
      } finally {
        await db.updateTable('workspaces').set({ plan: 'PRO' }).where('id', '=', hd.owner.workspaceId).execute();
      }
    });
  });
});
