import { badRequest } from '../../shared/errors.ts';

/**
 * A port of the conversation use cases: the team exists in the workspace (held against a
 * concurrent deletion until the transaction ends) and whether `userId`, if any, is a member.
 */
export type TeamStanding = (workspaceId: string, teamId: string, userId: string | null) => Promise<{ member: boolean } | undefined>;

/**
 * The team and assignee of a conversation after `PATCH` (the inbox rule for the assignee, "a
 * member of the inbox, or a Manager, Admin or Owner", is checked by the caller first). A team
 * narrows who takes the conversation, as round-robin does (spec 3.7):
 * - `teamId` names a team of the workspace (400 otherwise) or is null (the team is cleared;
 *   the assignee stays);
 * - an assignee given together with a team must be a member of that team (400 otherwise);
 * - moving the conversation to another team without naming an assignee hands it to that team:
 *   an assignee who is not a member of the new team is unassigned (as Chatwoot does);
 * - an assignee given alone, on a conversation that already has a team, follows the inbox rule
 *   only (a supervisor may hand a team's conversation to anyone who can see it).
 */
export async function teamAssignment(
  teamStanding: TeamStanding,
  workspaceId: string,
  current: { teamId: string | null; assigneeUserId: string | null },
  patch: { teamId?: string | null; assigneeUserId?: string | null },
): Promise<{ teamId: string | null; assigneeUserId: string | null }> {
  const teamId = patch.teamId === undefined ? current.teamId : patch.teamId;
  let assigneeUserId = patch.assigneeUserId === undefined ? current.assigneeUserId : patch.assigneeUserId;
  if (patch.teamId === undefined || patch.teamId === null) return { teamId, assigneeUserId };
  const standing = await teamStanding(workspaceId, patch.teamId, assigneeUserId);
  if (!standing) throw badRequest('body.teamId must be a team of this workspace, or null');
  if (assigneeUserId !== null && !standing.member) {
    if (patch.assigneeUserId != null) throw badRequest('body.assigneeUserId must be a member of the team given in body.teamId');
    if (patch.teamId !== current.teamId) assigneeUserId = null;
  }
  return { teamId, assigneeUserId };
}
