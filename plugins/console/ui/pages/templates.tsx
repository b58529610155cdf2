import type { Route } from '../router.ts';
import { PageHeader } from '../components.tsx';

export function TemplatesPage(_: { route: Route }) {
  return <PageHeader title="Templates & Flows" />;
}
