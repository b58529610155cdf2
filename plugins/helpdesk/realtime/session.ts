import type { Socket } from 'socket.io';
import type { PluginContext } from '../../kernel/context.ts';
import { getConversation } from '../../../core/helpdesk/conversations/conversations.ts';
import type { Actor } from '../../../core/identity/identity.ts';
import { authorize } from '../../../core/identity/roles.ts';
import { DomainError } from '../../../core/shared/errors.ts';
import { authenticateApiKey } from '../../../core/tokens/api-tokens.ts';
import { authenticateSession, type HandshakeHeaders } from '../../kernel/sessions.ts';
import { conversationStores } from '../conversations/store.ts';
import { automaticRooms, conversationRoom } from './rooms.ts';
import { sessionStores } from './session-store.ts';

/** Spec 5.5: a bad or revoked token "fails the namespace with `connect_error` whose message is `unauthorized`". */
export const UNAUTHORIZED = 'unauthorized';

/**
 * Server-to-client, ours (not a helpdesk event, never sent to webhooks): the member's rooms moved
 * because a role or an inbox membership changed; `{ roles, inboxIds }` as they now are.
 */
export const ACCESS_UPDATE = 'access.update';

/** The credential failed (unknown, revoked, its member gone): not a fault of the service. */
export function isCredentialFailure(error: unknown): boolean {
  return error instanceof DomainError && (error.kind === 'unauthenticated' || error.kind === 'forbidden');
}

/**
 * What a socket authenticated with: the `apikey` query parameter, else the handshake's headers
 * (the sign-in session cookie, with its Origin).
 */
export interface SocketCredential {
  apikey?: string;
  headers: HandshakeHeaders;
}

/**
 * A member connected to `/helpdesk` through one socket: who they are (spec 5.5: "Authenticate
 * with query parameter `apikey`; the workspace comes from the token"; without one, the sign-in
 * session cookie of the handshake), which rooms they belong in, and which conversations they may see.
 */
export class HelpdeskSession {
  /** Conversations found visible; an Agent's typing in one is not looked up again. */
  private readonly visible = new Set<string>();

  private constructor(
    private readonly ctx: PluginContext,
    private readonly credential: SocketCredential,
    public actor: Actor,
    private inboxIds: string[],
  ) {}

  /** Throws a 401/403 `DomainError` when neither the key nor the session cookie authenticates a member. */
  static async open(ctx: PluginContext, apikey: unknown, headers: HandshakeHeaders): Promise<HelpdeskSession> {
    const credential: SocketCredential = { apikey: typeof apikey === 'string' ? apikey : undefined, headers };
    const { actor, inboxIds } = await HelpdeskSession.authenticate(ctx, credential);
    return new HelpdeskSession(ctx, credential, actor, inboxIds);
  }

  private static async authenticate(ctx: PluginContext, credential: SocketCredential): Promise<{ actor: Actor; inboxIds: string[] }> {
    const stores = ctx.storage.read(sessionStores);
    const signedIn = credential.apikey === undefined ? await authenticateSession(ctx, credential.headers) : undefined;
    const actor = signedIn ?? (await authenticateApiKey(stores, ctx, credential.apikey, undefined));
    authorize(actor.roles, 'helpdesk.work', 'read');
    return { actor, inboxIds: await stores.memberInboxIds(actor.workspaceId, actor.userId) };
  }

  rooms(): string[] {
    return automaticRooms(this.actor, this.inboxIds);
  }

  /** The core's rule (`getConversation`): Managers and above see all; Agents only their inboxes'. */
  async sees(conversationId: string): Promise<boolean> {
    if (this.visible.has(conversationId)) return true;
    try {
      await getConversation(this.ctx.storage.read(conversationStores), this.actor, conversationId);
    } catch (error) {
      if (error instanceof DomainError && (error.kind === 'not_found' || error.kind === 'forbidden')) return false;
      throw error;
    }
    this.visible.add(conversationId);
    return true;
  }

  /** The re-check running, and the one waiting for it (each asks the database afresh). */
  private checking?: Promise<boolean>;
  private waiting?: Promise<boolean>;

  /**
   * Checks the key and the member's standing again (on each heartbeat, and when an access change
   * concerns the member): a revoked key or a member who left ends the session (false); a change
   * of role or of inbox membership moves the socket between rooms, and conversations no longer
   * visible are left. One re-check at a time, so two never move the rooms at once; callers that
   * come while one runs share the next.
   */
  refresh(socket: Socket): Promise<boolean> {
    if (this.waiting) return this.waiting;
    if (!this.checking) return this.start(socket);
    const waiting = this.checking.then(
      () => this.start(socket),
      () => this.start(socket),
    );
    this.waiting = waiting;
    return waiting;
  }

  private start(socket: Socket): Promise<boolean> {
    this.waiting = undefined;
    const checking = this.check(socket).finally(() => {
      if (this.checking === checking) this.checking = undefined;
    });
    this.checking = checking;
    return checking;
  }

  private async check(socket: Socket): Promise<boolean> {
    let fresh: { actor: Actor; inboxIds: string[] };
    try {
      fresh = await HelpdeskSession.authenticate(this.ctx, this.credential);
    } catch (error) {
      if (isCredentialFailure(error)) return false;
      throw error;
    }
    const before = new Set(this.rooms());
    this.actor = fresh.actor;
    this.inboxIds = fresh.inboxIds;
    const after = new Set(this.rooms());
    const left = [...before].filter((room) => !after.has(room));
    const joined = [...after].filter((room) => !before.has(room));
    for (const room of left) await socket.leave(room);
    await socket.join(joined);
    // A screen listing conversations cannot tell it lost (or gained) an inbox from events it no
    // longer hears: say so, and it reads its lists again.
    if (left.length > 0 || joined.length > 0) socket.emit(ACCESS_UPDATE, { roles: this.actor.roles, inboxIds: this.inboxIds });
    this.visible.clear();
    const prefix = conversationRoom('');
    for (const room of [...socket.rooms]) {
      if (room.startsWith(prefix) && !(await this.sees(room.slice(prefix.length)))) await socket.leave(room);
    }
    return true;
  }
}
