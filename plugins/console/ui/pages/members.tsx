import type { Route } from '../router.ts';
import { PageHeader } from '../components.tsx';

export function MembersPage(_: { route: Route }) {
  return <PageHeader title="Members" />;
}
