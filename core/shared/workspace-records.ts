import type { Actor } from '../identity/identity.ts';
import { authorize, type Capability } from '../identity/roles.ts';
import type { DomainError } from './errors.ts';
import type { Page, PageRequest } from './pagination.ts';

/** A workspace's records of one kind, as their store offers them. */
export interface WorkspaceRecords<T> {
  list(workspaceId: string, request: PageRequest): Promise<Page<T>>;
  get(workspaceId: string, id: string): Promise<T | undefined>;
}

/**
 * The read side the workspace's catalogues share (labels, contacts, canned responses, agent bots,
 * SLA policies, helpdesk webhooks): a page and a record behind one capability; a record of
 * another workspace is not found, never forbidden (spec 7.1).
 */
export function workspaceReads<T>(capability: Capability, notFound: (id: string) => DomainError) {
  return {
    list(records: WorkspaceRecords<T>, actor: Actor, request: PageRequest): Promise<Page<T>> {
      authorize(actor.roles, capability, 'read');
      return records.list(actor.workspaceId, request);
    },
    async get(records: WorkspaceRecords<T>, actor: Actor, id: string): Promise<T> {
      authorize(actor.roles, capability, 'read');
      const found = await records.get(actor.workspaceId, id);
      if (!found) throw notFound(id);
      return found;
    },
  };
}

/** The writes of a store whose records are inserted, replaced whole and deleted by id. */
export interface RecordWrites<T> {
  insert(record: T): Promise<void>;
  update(record: T): Promise<void>;
  delete(id: string): Promise<void>;
}

/** A workspace's records of one kind, read by page or id and written whole. */
export interface WorkspaceRecordStore<T> extends WorkspaceRecords<T>, RecordWrites<T> {}

/** Settings kept one per owner (a workspace, an inbox): read by the owner's id, written whole. */
export interface SettingsStore<T> {
  get(ownerId: string): Promise<T | undefined>;
  put(settings: T): Promise<void>;
}
