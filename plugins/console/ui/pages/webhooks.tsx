import type { Route } from '../router.ts';
import { PageHeader } from '../components.tsx';

export function WebhooksPage(_: { route: Route }) {
  return <PageHeader title="Webhooks" />;
}
