import { sql, type Kysely, type Selectable } from 'kysely';
import type { Template, TemplateStore } from '../../../core/templates/templates.ts';
import type { TemplateStatus } from '../../../core/templates/template-status.ts';
import { camelCased, snakeCased } from '../row-case.ts';
import type { Database, TemplatesTable } from '../schema.ts';
import { containing } from '../like-pattern.ts';
import { pageOfRows } from '../paged-rows.ts';

/** Templates of official connections (migration 0010); newest first; `s` searches the name. */
export function templateStore(db: Kysely<Database>): TemplateStore {
  const one = (row: Selectable<TemplatesTable> | undefined) => (row ? toTemplate(row) : undefined);
  return {
    async list(connectionId, request) {
      let query = db.selectFrom('templates').where('connection_id', '=', connectionId);
      if (request.search) query = query.where('name', 'ilike', containing(request.search));
      return pageOfRows(query, request, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'), toTemplate);
    },
    async get(connectionId, id) {
      return one(await db.selectFrom('templates').selectAll().where('connection_id', '=', connectionId).where('id', '=', id).executeTakeFirst());
    },
    async findByExternalId(connectionId, externalId) {
      return one(await db.selectFrom('templates').selectAll().where('connection_id', '=', connectionId).where('external_id', '=', externalId).executeTakeFirst());
    },
    async lockByExternalId(connectionId, externalId) {
      return one(await db.selectFrom('templates').selectAll().where('connection_id', '=', connectionId).where('external_id', '=', externalId).forUpdate().executeTakeFirst());
    },
    async findByName(connectionId, name, language) {
      return one(
        await db.selectFrom('templates').selectAll().where('connection_id', '=', connectionId).where('name', '=', name).where('language', '=', language).executeTakeFirst(),
      );
    },
    async all(connectionId) {
      return (await db.selectFrom('templates').selectAll().where('connection_id', '=', connectionId).execute()).map(toTemplate);
    },
    async insert(t) {
      await db.insertInto('templates').values(toRow(t)).execute();
    },
    async upsert(t) {
      const { id: _, workspace_id: __, connection_id: ___, name: ____, language: _____, created_at: ______, ...changes } = toRow(t);
      await db
        .insertInto('templates')
        .values(toRow(t))
        .onConflict((oc) => oc.columns(['connection_id', 'name', 'language']).doUpdateSet(changes))
        .execute();
    },
    async update(t) {
      await db
        .updateTable('templates')
        .set({ status: t.status, rejected_reason: t.rejectedReason, category: t.category, updated_at: t.updatedAt })
        .where('id', '=', t.id)
        .execute();
    },
    async delete(id) {
      await db.deleteFrom('templates').where('id', '=', id).execute();
    },
  };
}

function toTemplate(row: Selectable<TemplatesTable>): Template {
  const components = typeof row.components === 'string' ? JSON.parse(row.components) : row.components;
  return { ...camelCased(row), components: components as unknown[], status: row.status as TemplateStatus };
}

function toRow(t: Template) {
  return {
    ...snakeCased(t),
    // An array bound as is would go out as a Postgres array, not JSON.
    components: sql<unknown[]>`cast(${JSON.stringify(t.components)} as jsonb)`,
  };
}
