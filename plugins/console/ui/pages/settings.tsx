/**
 * Helpdesk settings (`#/settings/<section>`): what a Manager sets up once so a team can work the
 * inbox — inboxes with their channel, assignment, members and hours, teams, labels, canned responses,
 * macros and SLA policies. Each section is its own file; this one holds the tabs between them, kept in the address.
 */
import { PageHeader } from '../components.tsx';
import { href, type Route } from '../router.ts';
import { SECTIONS, type SectionSlug } from './settings-model.ts';
import { InboxesSection } from './settings-inboxes.tsx';
import { TeamsSection } from './settings-teams.tsx';
import { LabelsSection } from './settings-labels.tsx';
import { CannedResponsesSection } from './settings-canned.tsx';
import { MacrosSection } from './settings-macros.tsx';
import { SlaSection } from './settings-sla.tsx';
import './settings.css';

export function SettingsPage({ route }: { route: Route }) {
  const section: SectionSlug = SECTIONS.find((s) => s.slug === route.parts[1])?.slug ?? 'inboxes';
  const id = route.parts[2];
  return (
    <>
      <PageHeader title="Helpdesk settings" description="Inboxes and who works them, teams, labels, canned responses, macros and SLA policies of this workspace." />
      <nav class="settings-tabs" aria-label="Helpdesk settings sections">
        <ul>
          {SECTIONS.map((s) => (
            <li>
              <a href={href('settings', s.slug)} aria-current={s.slug === section ? 'page' : undefined}>
                {s.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {section === 'inboxes' && <InboxesSection id={id} />}
      {section === 'teams' && <TeamsSection id={id} />}
      {section === 'labels' && <LabelsSection />}
      {section === 'canned-responses' && <CannedResponsesSection />}
      {section === 'macros' && <MacrosSection />}
      {section === 'sla-policies' && <SlaSection />}
    </>
  );
}
