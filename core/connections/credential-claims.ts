import type { Actor, IdentityStore } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { coded, DomainError } from '../shared/errors.ts';
import type { ConnectionStore } from './connection.ts';
import { connectionNotFound, type ConnectionDeps } from './connections.ts';

/**
 * An official connection claims its phone number id (one connection per number: callbacks are
 * routed by it) only once the platform confirms the credentials own that number (issue 19 §5).
 * Otherwise a bogus connection in one workspace would hold another workspace's real number, and
 * the 409 of the real owner would tell anybody which numbers are registered here.
 *
 * These run before the transaction that creates or updates the connection: the platform is
 * asked over the network, and no row lock is held while it answers.
 */
export async function confirmNewCredentials(
  identity: Pick<IdentityStore, 'getWorkspace'>,
  deps: Pick<ConnectionDeps, 'plans' | 'drivers'>,
  actor: Actor,
  input: { driver: string; credentials?: Record<string, unknown> },
): Promise<void> {
  authorize(actor.roles, 'connections', 'write');
  const driver = deps.drivers.get(input.driver);
  if (!driver?.confirmCredentials || !driver.prepareCredentials) return; // createConnection reports an unknown driver
  // A workspace that may not have an official connection learns that first, without asking the platform.
  const workspace = await identity.getWorkspace(actor.workspaceId);
  if (!workspace) throw new DomainError('not_found', `Workspace ${actor.workspaceId} not found`);
  if (driver.capabilities.official && !deps.plans[workspace.plan].officialConnections) {
    throw coded('forbidden', 'USER_PLAN_OFFICIAL_CONNECTIONS', 'Official connections are available on paid plans (PRO); upgrade to add one.');
  }
  await driver.confirmCredentials(driver.prepareCredentials(input.credentials ?? {}));
}

/** The same for changed credentials: the merged result (fields left out keep their value) is confirmed. */
export async function confirmChangedCredentials(
  connections: Pick<ConnectionStore, 'get'>,
  deps: Pick<ConnectionDeps, 'drivers'>,
  actor: Actor,
  id: string,
  patch: { credentials?: Record<string, unknown> },
): Promise<void> {
  if (patch.credentials === undefined) return;
  authorize(actor.roles, 'connections', 'write');
  const connection = await connections.get(actor.workspaceId, id);
  if (!connection) throw connectionNotFound(id);
  const driver = deps.drivers.get(connection.driver);
  if (!driver?.confirmCredentials || !driver.prepareCredentials) return;
  await driver.confirmCredentials(driver.prepareCredentials({ ...connection.credentials, ...patch.credentials }));
}
