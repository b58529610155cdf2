import { describe, expect, test } from 'bun:test';
import { useTestService } from '../support/service.ts';
import { useHelpdeskWorkspace } from '../support/helpdesk.ts';

/**
 * CSV imports racing other writers of the same phones (issue 23): rows go a hundred to a
 * transaction, and a row whose phone another request created at the same moment updates that
 * contact. Real concurrent requests against the real service: never a 500, never a lost row,
 * each phone once, and every row's attributes on its contact.
 */

const service = useTestService();
const hd = useHelpdeskWorkspace(service, { connection: 'import race line', inbox: 'Import race' });
const { owner } = hd;

const importCsv = (csv: string) => service.call('POST', '/v3/helpdesk/contacts/import', { apikey: owner.token, body: csv, headers: { 'content-type': 'text/csv' } });
const phones = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `+55119${prefix}${String(i).padStart(4, '0')}`);

/** The workspace's contacts with these phones, straight from the table: a phone twice would show here. */
async function contactsWith(list: string[]) {
  const rows = (await service.runtime.ctx.db
    .selectFrom('helpdesk_contacts' as any)
    .select(['phone', 'custom_attributes'] as any)
    .where('workspace_id', '=', owner.workspaceId)
    .where('phone', 'in', list)
    .execute()) as Array<{ phone: string; custom_attributes: unknown }>;
  return rows.map((r) => ({ phone: r.phone, attributes: (typeof r.custom_attributes === 'string' ? JSON.parse(r.custom_attributes) : r.custom_attributes) as Record<string, string> }));
}

describe('import races', () => {
  test('two imports of the same 150 phones at once (in opposite orders): both succeed, each phone once, both rows applied to it', async () => {
    const list = phones('7100', 150);
    const first = ['phone,first', ...list.map((p) => `${p},yes`)].join('\n');
    // The other file walks the phones backwards, so both hold rows the other one waits for.
    const second = ['phone,second', ...[...list].reverse().map((p) => `${p},yes`)].join('\n');
    const [a, b] = await Promise.all([importCsv(first), importCsv(second)]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.skipped).toEqual([]);
    expect(b.body.skipped).toEqual([]);
    expect(a.body.created + a.body.updated).toBe(150);
    expect(b.body.created + b.body.updated).toBe(150);
    // Every phone was created by exactly one of them.
    expect(a.body.created + b.body.created).toBe(150);

    const contacts = await contactsWith(list);
    expect(contacts.length).toBe(150);
    expect(new Set(contacts.map((c) => c.phone)).size).toBe(150);
    for (const c of contacts) expect(c.attributes).toEqual({ first: 'yes', second: 'yes' });
  });

  test('an import racing single contact creates of its phones: creates answer 201 or 409, the import updates what they made', async () => {
    const list = phones('7200', 400);
    const csv = ['phone,name,imported', ...list.map((p, i) => `${p},Imported ${i},yes`)].join('\n');
    let importing = true;
    const created: string[] = [];
    const statuses: number[] = [];
    // Four agents create contacts from the end of the list backwards while the import walks it
    // forwards: where they meet, both look for the same phone and both insert it.
    const walker = async (lane: number) => {
      for (let i = list.length - 1 - lane; i >= 0 && importing; i -= 4) {
        const res = await service.call('POST', '/v3/helpdesk/contacts', { apikey: owner.token, body: { phone: list[i], customAttributes: { createdBy: 'api' } } });
        statuses.push(res.status);
        if (res.status === 201) created.push(list[i]!);
      }
    };
    const walking = Promise.all([0, 1, 2, 3].map(walker));
    const imported = await importCsv(csv);
    importing = false;
    await walking;
    expect(imported.status).toBe(201);
    expect(imported.body.skipped).toEqual([]);
    expect(imported.body.created + imported.body.updated).toBe(400);
    expect(imported.body.updated).toBe(created.length);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(created.length).toBeGreaterThan(0);

    const contacts = await contactsWith(list);
    expect(contacts.length).toBe(400);
    expect(new Set(contacts.map((c) => c.phone)).size).toBe(400);
    for (const c of contacts) {
      // A contact the API made (201) existed before the import's row, which then updated it; the others the import made.
      expect(c.attributes).toEqual(created.includes(c.phone) ? { createdBy: 'api', imported: 'yes' } : { imported: 'yes' });
    }
    const named = (await service.call('GET', `/v3/helpdesk/contacts?s=${encodeURIComponent(list[0]!)}`, { apikey: owner.token })).body.data[0];
    expect(named.name).toBe('Imported 0');
  });
});
