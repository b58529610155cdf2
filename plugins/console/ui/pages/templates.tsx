/**
 * Templates & Flows of an official (cloud-api) number: the message templates the platform holds
 * for it, with their review status (and why one was rejected), a form for a new template, and
 * WhatsApp Flows (create one from its JSON, and the number's Flow encryption key). Unofficial
 * and sandbox numbers have neither, so without an official connection the page says how to get one.
 */
import { useState } from 'preact/hooks';
import { del, get, itemsOf } from '../api.ts';
import { Button, Card, ConfirmButton, EmptyState, ErrorNote, Loading, PageHeader, SelectField, StatusBadge, Table, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { href, type Route } from '../router.ts';
import { useSession } from '../session.ts';
import { NewTemplate } from './templates-form.tsx';
import { Flows } from './templates-flows.tsx';
import type { Connection } from './connections-model.ts';


export interface Template {
  id: string;
  name: string;
  language: string;
  category: string;
  status: string;
  rejected_reason: string | null;
  components: { type: string; text?: string }[];
  createdAt: string;
}

export function TemplatesPage({ route }: { route: Route }) {
  const writes = useSession().may('connections', 'write');
  const connections = useLoad(async () => (await get<Connection[]>('/v3/connections')).filter((c) => c.official || c.capabilities.templates), []);
  const [picked, setPicked] = useState(route.query.get('connection') ?? '');
  const official = connections.data ?? [];
  const connection = official.find((c) => c.id === picked) ?? official[0];

  return (
    <>
      <PageHeader title="Templates & Flows" description="Message templates reviewed by the platform, and WhatsApp Flows, of your official numbers." />
      <ErrorNote error={connections.error} />
      {!connections.data ? (
        !connections.error && <Loading rows={4} label="Loading connections" />
      ) : !connection ? (
        <Card title="No official number">
          <EmptyState title="Templates need an official (cloud-api) number">
            Message templates and Flows live on the WhatsApp Business Platform, so they exist only for connections with the <span class="mono">cloud-api</span> driver.
            Sandbox and QR-paired numbers have none. <a href={href('connections')}>Add an official connection</a> with your platform credentials to manage them here.
          </EmptyState>
        </Card>
      ) : (
        <>
          {official.length > 1 && (
            <div class="narrow">
              <SelectField
                label="Official number"
                value={connection.id}
                options={official.map((c) => ({ value: c.id, label: `${c.name}${c.phoneNumber ? ` (${c.phoneNumber})` : ''}` }))}
                onValue={setPicked}
              />
            </div>
          )}
          <TemplateList key={connection.id} connectionId={connection.id} writes={writes} />
          {connection.capabilities.flows && <Flows key={`flows-${connection.id}`} connectionId={connection.id} writes={writes} />}
        </>
      )}
    </>
  );
}

function TemplateList({ connectionId, writes }: { connectionId: string; writes: boolean }) {
  const templates = useLoad(async () => itemsOf<Template>(await get(`/v3/connections/${connectionId}/templates`, { per_page: 100 })), [connectionId]);
  return (
    <>
      <Card
        title="Templates"
        actions={
          <Button variant="secondary" onClick={() => void templates.reload()} pending={templates.loading && Boolean(templates.data)}>
            Refresh statuses
          </Button>
        }
      >
        <ErrorNote error={templates.error} />
        {!templates.data ? (
          !templates.error && <Loading />
        ) : templates.data.length === 0 ? (
          <EmptyState title="No templates yet">A template is reviewed by the platform before it can be sent; new ones start PENDING.</EmptyState>
        ) : (
          <Table caption="Templates of the number, newest first" head={['Name', 'Language', 'Category', 'Status', 'Body', 'Created', ...(writes ? [''] : [])]}>
            {templates.data.map((t) => (
              <tr>
                <td class="mono">{t.name}</td>
                <td>{t.language}</td>
                <td>{t.category.toLowerCase()}</td>
                <td>
                  <StatusBadge status={t.status} />
                  {t.rejected_reason && <div class="muted">{t.rejected_reason}</div>}
                </td>
                <td class="template-body">{t.components.find((c) => c.type === 'BODY')?.text ?? '—'}</td>
                <td>
                  <When at={t.createdAt} />
                </td>
                {writes && (
                  <td>
                    <DeleteTemplate connectionId={connectionId} template={t} onDeleted={templates.reload} />
                  </td>
                )}
              </tr>
            ))}
          </Table>
        )}
      </Card>
      {writes && <NewTemplate connectionId={connectionId} onCreated={templates.reload} />}
    </>
  );
}

function DeleteTemplate({ connectionId, template, onDeleted }: { connectionId: string; template: Template; onDeleted: () => void }) {
  const action = useAction();
  return (
    <>
      <ConfirmButton confirm="Delete on the platform?" pending={action.pending} onConfirm={() => void action.run(() => del(`/v3/connections/${connectionId}/templates/${template.id}`)).then((r) => r && onDeleted())}>
        Delete
      </ConfirmButton>
      <ErrorNote error={action.error} />
    </>
  );
}
