/**
 * The console's pages: where each lives, what it is called in the menu, and what the roles
 * matrix must allow for the member to see it (the service checks again on every call).
 */
import type { FunctionComponent } from 'preact';
import type { Access, Capability } from '../../../core/identity/roles.ts';
import type { Route } from './router.ts';
import type { ConsoleSession } from './session.ts';
import { OverviewPage } from './pages/overview.tsx';
import { ConnectionsPage } from './pages/connections.tsx';
import { MessagesPage } from './pages/messages.tsx';
import { InboxPage } from './pages/inbox/inbox-page.tsx';
import { ContactsPage } from './pages/contacts.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { CampaignsPage } from './pages/campaigns.tsx';
import { TemplatesPage } from './pages/templates.tsx';
import { TokensPage } from './pages/tokens.tsx';
import { MembersPage } from './pages/members.tsx';
import { OAuthPage } from './pages/oauth.tsx';
import { AccountPage } from './pages/account.tsx';
import { SettingsPage } from './pages/settings.tsx';

export interface ConsolePage {
  /** The first segment of its address (`#/connections/…`); '' is the overview. */
  slug: string;
  title: string;
  needs: [Capability, Access];
  component: FunctionComponent<{ route: Route }>;
  /** Shown only where the helpdesk works (the plugin loaded: `helpdeskEnabled` of the workspace). */
  helpdesk?: true;
}

export const PAGES: ConsolePage[] = [
  { slug: '', title: 'Overview', needs: ['workspace.read', 'read'], component: OverviewPage },
  { slug: 'inbox', title: 'Inbox', needs: ['helpdesk.work', 'read'], component: InboxPage, helpdesk: true },
  { slug: 'contacts', title: 'Contacts', needs: ['helpdesk.work', 'read'], component: ContactsPage, helpdesk: true },
  { slug: 'connections', title: 'Connections', needs: ['connections', 'read'], component: ConnectionsPage },
  { slug: 'messages', title: 'Messages', needs: ['messages.read', 'read'], component: MessagesPage },
  { slug: 'webhooks', title: 'Webhooks', needs: ['connections', 'read'], component: WebhooksPage },
  { slug: 'campaigns', title: 'Campaigns', needs: ['messages.send', 'read'], component: CampaignsPage },
  { slug: 'templates', title: 'Templates & Flows', needs: ['connections', 'read'], component: TemplatesPage },
  { slug: 'tokens', title: 'API tokens', needs: ['tokens', 'read'], component: TokensPage },
  { slug: 'members', title: 'Members', needs: ['members', 'read'], component: MembersPage },
  { slug: 'oauth', title: 'OAuth apps', needs: ['tokens', 'read'], component: OAuthPage },
  { slug: 'settings', title: 'Helpdesk settings', needs: ['helpdesk.configure', 'read'], component: SettingsPage, helpdesk: true },
  { slug: 'account', title: 'Your account', needs: ['workspace.read', 'read'], component: AccountPage },
];

/** The pages this member sees in this workspace: their roles allow it, and its feature is on. */
export function pagesFor(session: ConsoleSession): ConsolePage[] {
  return PAGES.filter((page) => session.may(...page.needs) && (!page.helpdesk || session.workspace.helpdeskEnabled !== false));
}
