import type { Route } from '../router.ts';
import { PageHeader } from '../components.tsx';

export function ConnectionsPage(_: { route: Route }) {
  return <PageHeader title="Connections" />;
}
