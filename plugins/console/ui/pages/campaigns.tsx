import type { Route } from '../router.ts';
import { PageHeader } from '../components.tsx';

export function CampaignsPage(_: { route: Route }) {
  return <PageHeader title="Campaigns" />;
}
