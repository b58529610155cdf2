/**
 * Campaigns: one message to many recipients. `#/campaigns` lists them with their progress,
 * `#/campaigns/new` builds one from a CSV, `#/campaigns/<id>` follows one live and pauses,
 * resumes or cancels it. When the campaigns plugin is off, every address says so.
 */
import { get, itemsOf } from '../api.ts';
import { Button, Card, EmptyState, ErrorNote, Loading, PageHeader, StatusBadge, Table, When } from '../components.tsx';
import { useLoad } from '../data.ts';
import { href, navigate, type Route } from '../router.ts';
import { useSession } from '../session.ts';
import { CampaignDetail } from './campaigns-detail.tsx';
import { type Campaign, pluginIsOff } from './campaigns-model.ts';
import { PluginOff, ProgressMeter } from './campaigns-parts.tsx';
import { NewCampaign } from './campaigns-new.tsx';

export function CampaignsPage({ route }: { route: Route }) {
  const id = route.parts[1];
  if (id === 'new') return <NewCampaign />;
  if (id) return <CampaignDetail id={id} />;
  return <CampaignList />;
}

function CampaignList() {
  const writes = useSession().may('messages.send', 'write');
  // Progress moves while campaigns send: the list refreshes on its own.
  const campaigns = useLoad(async () => itemsOf<Campaign>(await get('/v3/campaigns', { per_page: 100 })), [], { every: 4000 });
  const off = pluginIsOff(campaigns.error);

  return (
    <>
      <PageHeader
        title="Campaigns"
        description="One message to many recipients on one connection, at a pace you choose, with a personal touch from a CSV's columns."
        actions={writes && !off && <Button onClick={() => navigate('campaigns', 'new')}>New campaign</Button>}
      />
      {off ? (
        <PluginOff />
      ) : (
        <Card title="All campaigns">
          <ErrorNote error={campaigns.error} />
          {!campaigns.data ? (
            <Loading />
          ) : campaigns.data.length === 0 ? (
            <EmptyState title="No campaigns yet">
              {writes ? <a href={href('campaigns', 'new')}>Create a campaign</a> : 'A member who may send messages can create one'} from a CSV of phone numbers.
            </EmptyState>
          ) : (
            <Table caption="Campaigns, newest first" head={['Campaign', 'Status', 'Progress', 'Created']}>
              {campaigns.data.map((c) => (
                <tr>
                  <td>
                    <a href={href('campaigns', c.id)}>{c.name}</a>
                  </td>
                  <td>
                    <StatusBadge status={c.status} />
                    {c.statusReason && <div class="muted">{c.statusReason.replaceAll('_', ' ')}</div>}
                  </td>
                  <td class="progress-cell">
                    <ProgressMeter campaign={c} />
                  </td>
                  <td>
                    <When at={c.createdAt} />
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </Card>
      )}
    </>
  );
}
