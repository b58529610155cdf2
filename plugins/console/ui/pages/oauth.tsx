import type { Route } from '../router.ts';
import { PageHeader } from '../components.tsx';

export function OAuthPage(_: { route: Route }) {
  return <PageHeader title="OAuth apps" />;
}
