/**
 * The host's sign-in sessions as a plugin's websocket namespaces use them: the member a
 * handshake's session cookie acts as (undefined without one; a `DomainError` 401/403 when the
 * session ended, the handshake came from another origin, or `X-Account-Id` names a workspace
 * they are not in). Call it again to re-check a socket.
 */
import { authenticateHandshakeSession } from '../../adapters/http/web-session.ts';
import { onPluginContext } from './host.ts';

export type { HandshakeHeaders } from '../../adapters/http/web-session.ts';
export const authenticateSession = onPluginContext(authenticateHandshakeSession);
