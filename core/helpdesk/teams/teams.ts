import type { WorkspaceRecordStore } from '../../shared/workspace-records.ts';
import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import { badRequest, conflict, notFound } from '../../shared/errors.ts';
import type { Page, PageRequest } from '../../shared/pagination.ts';
import type { Clock, IdGen } from '../../shared/ports.ts';
import type { Conversation } from '../conversations/conversations.ts';
import { assigneeChanged, type HelpdeskEventLog } from '../events.ts';
import { assertHelpdeskConfigurable, type WorkspacePlans } from '../plan-gate.ts';
import { onlyWorkspaceMembers, type WorkspaceMembership } from '../../identity/members.ts';

/**
 * Teams of agents (Chatwoot-like; spec 2.11 gives a conversation a `teamId`, 3.7 restricts
 * round-robin to a team). A team belongs to a workspace; its members are members of the
 * workspace. Every member may read teams (an Agent picks a team when handing a conversation
 * on); creating, changing, deleting a team and setting its members is `helpdesk.configure`
 * (Owner, Admin, Manager) on the PRO plan.
 */
export interface Team {
  id: string;
  workspaceId: string;
  /** Unique in the workspace, case-insensitively. */
  name: string;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface TeamMember {
  userId: string;
  name: string;
  email: string;
}

export interface TeamWithMembers extends Team {
  members: TeamMember[];
}

/** `list`'s `search` matches the name; `insert` and `update` throw `duplicateTeamName()` when the name is taken in the workspace. */
export interface TeamStore extends WorkspaceRecordStore<Team> {
  /** Current members of the workspace among the team's members, by email (round-robin reads this too). */
  members(teamId: string): Promise<TeamMember[]>;
  /** The members of several teams at once (for a page of teams). */
  membersOf(teamIds: string[]): Promise<Map<string, TeamMember[]>>;
  isMember(teamId: string, userId: string): Promise<boolean>;
  setMembers(teamId: string, userIds: string[]): Promise<void>;
  /**
   * Clears the team from its conversations (same transaction as the deletion) and answers each
   * conversation as it was before and after.
   */
  clearFromConversations(teamId: string, at: Date): Promise<Array<{ before: Conversation; after: Conversation }>>;
}

export interface TeamStores extends WorkspaceMembership {
  teams: TeamStore;
  plans: WorkspacePlans;
  events: HelpdeskEventLog;
}

export interface TeamDeps {
  clock: Clock;
  ids: IdGen;
}

export interface TeamInput {
  name: string;
  description?: string | null;
}

export const MAX_TEAM_NAME = 120;
export const MAX_TEAM_DESCRIPTION = 1000;

export const teamNotFound = () => notFound('Team not found');
export const duplicateTeamName = () => conflict('A team with this name already exists in the workspace');

export async function listTeams(stores: TeamStores, actor: Actor, request: PageRequest): Promise<Page<TeamWithMembers>> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  const found = await stores.teams.list(actor.workspaceId, request);
  const members = await stores.teams.membersOf(found.data.map((t) => t.id));
  return { ...found, data: found.data.map((t) => ({ ...t, members: members.get(t.id) ?? [] })) };
}

export async function getTeam(stores: TeamStores, actor: Actor, id: string): Promise<TeamWithMembers> {
  const team = await visibleTeam(stores, actor, id);
  return { ...team, members: await stores.teams.members(team.id) };
}

export async function createTeam(stores: TeamStores, deps: TeamDeps, actor: Actor, input: TeamInput): Promise<TeamWithMembers> {
  await assertHelpdeskConfigurable(stores.plans, actor);
  const problems: string[] = [];
  const name = checkName(input.name, problems);
  const description = checkDescription(input.description, problems);
  if (problems.length > 0) throw badRequest(problems);
  const now = deps.clock.now();
  const team: Team = { id: deps.ids.next(), workspaceId: actor.workspaceId, name, description: description ?? null, createdAt: now, updatedAt: now };
  await stores.teams.insert(team);
  return { ...team, members: [] };
}

/** Fields left out keep their value; `description: null` clears it. */
export async function updateTeam(stores: TeamStores, deps: TeamDeps, actor: Actor, id: string, patch: Partial<TeamInput>): Promise<TeamWithMembers> {
  const team = await visibleTeam(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  const problems: string[] = [];
  const name = patch.name === undefined ? team.name : checkName(patch.name, problems);
  const description = checkDescription(patch.description, problems);
  if (problems.length > 0) throw badRequest(problems);
  const updated: Team = { ...team, name, description: description === undefined ? team.description : description, updatedAt: deps.clock.now() };
  await stores.teams.update(updated);
  return { ...updated, members: await stores.teams.members(team.id) };
}

/**
 * Deletes the team. Its conversations keep their assignee and lose the team in the same
 * transaction, each recording `helpdesk.conversation.assignee_changed` (`toTeamId: null`, the
 * deleting member as actor): webhooks and sockets that show a conversation's team stay right.
 */
export async function deleteTeam(stores: TeamStores, deps: TeamDeps, actor: Actor, id: string): Promise<void> {
  const team = await visibleTeam(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  const cleared = await stores.teams.clearFromConversations(team.id, deps.clock.now());
  for (const { before, after } of cleared) await stores.events.record(assigneeChanged(before, after, actor.userId));
  await stores.teams.delete(team.id);
}

export async function listTeamMembers(stores: TeamStores, actor: Actor, id: string): Promise<TeamMember[]> {
  const team = await visibleTeam(stores, actor, id);
  return stores.teams.members(team.id);
}

/** Replaces the team's members; every user must be a member of the workspace. */
export async function setTeamMembers(stores: TeamStores, deps: TeamDeps, actor: Actor, id: string, userIds: string[]): Promise<TeamMember[]> {
  const team = await visibleTeam(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  const wanted = await onlyWorkspaceMembers(stores, actor.workspaceId, userIds);
  await stores.teams.setMembers(team.id, wanted);
  await stores.teams.update({ ...team, updatedAt: deps.clock.now() });
  return stores.teams.members(team.id);
}

async function visibleTeam(stores: TeamStores, actor: Actor, id: string): Promise<Team> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  const team = await stores.teams.get(actor.workspaceId, id);
  if (!team) throw teamNotFound();
  return team;
}

function checkName(name: string, problems: string[]): string {
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (trimmed.length < 1 || trimmed.length > MAX_TEAM_NAME) problems.push(`body.name must be 1 to ${MAX_TEAM_NAME} characters`);
  return trimmed;
}

/** undefined: left out; null or blank: none. */
function checkDescription(description: string | null | undefined, problems: string[]): string | null | undefined {
  if (description === undefined || description === null) return description;
  const trimmed = description.trim();
  if (trimmed.length > MAX_TEAM_DESCRIPTION) problems.push(`body.description must be at most ${MAX_TEAM_DESCRIPTION} characters`);
  return trimmed.length === 0 ? null : trimmed;
}
