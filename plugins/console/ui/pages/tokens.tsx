import type { Route } from '../router.ts';
import { PageHeader } from '../components.tsx';

export function TokensPage(_: { route: Route }) {
  return <PageHeader title="API tokens" />;
}
