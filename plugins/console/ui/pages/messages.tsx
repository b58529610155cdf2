import type { Route } from '../router.ts';
import { PageHeader } from '../components.tsx';

export function MessagesPage(_: { route: Route }) {
  return <PageHeader title="Messages" />;
}
