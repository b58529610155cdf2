import type { Route } from '../router.ts';
import { PageHeader } from '../components.tsx';

export function AccountPage(_: { route: Route }) {
  return <PageHeader title="Your account" />;
}
