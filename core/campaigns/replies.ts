import type { UnitOfWork } from '../shared/unit-of-work.ts';
import { normalizePhone } from './audience.ts';
import { failCampaign, pause, resume, type CampaignDeps, type CampaignStores } from './campaigns.ts';

/**
 * Words that, sent alone as a reply, ask for no more campaigns (case, accents and punctuation
 * aside): English, Spanish, Portuguese, French, German and Italian.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  'stop', 'stopall', 'unsubscribe', 'cancel', 'end', 'quit', 'optout', 'opt out', 'remove',
  'baja', 'parar', 'alto', 'cancelar', 'sair', 'descadastrar', 'pare',
  'arret', 'arreter', 'desabonner', 'stopp', 'abmelden', 'basta', 'disiscrivi',
]);

/** Whether a reply is a request to stop: the whole message is one of the stop words. */
export function isStopRequest(text: string): boolean {
  const word = text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N} ]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return STOP_WORDS.has(word);
}

/**
 * A contact wrote to a connection: their latest campaign message counts as replied, and a stop
 * word puts the number on the workspace's opt-out list, so later campaigns leave it out (and
 * running ones skip it when they reach it). Idempotent: replaying the event changes nothing more.
 */
export async function noteContactReply(
  stores: Pick<CampaignStores, 'recipients' | 'optOuts'>,
  reply: { workspaceId: string; connectionId: string; from: string; text: string | null; at: Date },
): Promise<{ optedOut: boolean }> {
  const phone = normalizePhone(reply.from);
  if (!phone) return { optedOut: false };
  await stores.recipients.markReplied(reply.connectionId, phone, reply.at);
  if (reply.text === null || !isStopRequest(reply.text)) return { optedOut: false };
  await stores.optOuts.add(reply.workspaceId, phone, reply.at, `replied "${reply.text.trim().slice(0, 40)}"`);
  return { optedOut: true };
}

/**
 * A connection's status changed (or it was deleted): running campaigns on it pause when it goes
 * down, campaigns the service paused for that reason resume when it is back, and every campaign
 * still active on a deleted connection fails and gives its credits back.
 */
export async function followConnection(uow: UnitOfWork<CampaignStores>, deps: CampaignDeps, change: { connectionId: string; to: string }): Promise<void> {
  await uow.transaction(async (stores) => {
    if (change.to === 'DELETED') {
      for (const found of await stores.campaigns.ofConnection(change.connectionId, ['SCHEDULED', 'RUNNING', 'PAUSED'])) {
        const campaign = await stores.campaigns.lock(found.id);
        if (campaign && ['SCHEDULED', 'RUNNING', 'PAUSED'].includes(campaign.status)) await failCampaign(stores, deps, campaign, 'connection_deleted');
      }
    } else if (change.to === 'CONNECTED') {
      for (const found of await stores.campaigns.ofConnection(change.connectionId, ['PAUSED'])) {
        const campaign = await stores.campaigns.lock(found.id);
        if (campaign?.status === 'PAUSED' && campaign.statusReason === 'connection_not_connected') await resume(stores, deps, campaign);
      }
    } else {
      // A late event (its worker died holding it; it ran again after the connection came back)
      // must not pause a campaign whose connection is connected now; the pacer pauses one whose
      // connection is really down on its next run anyway.
      if ((await stores.connections.find(change.connectionId))?.status === 'CONNECTED') return;
      for (const found of await stores.campaigns.ofConnection(change.connectionId, ['RUNNING'])) {
        const campaign = await stores.campaigns.lock(found.id);
        if (campaign?.status === 'RUNNING') await pause(stores, deps, campaign, 'connection_not_connected');
      }
    }
  });
}

/** The words of an incoming message in the 2.13 shape (text, a caption, a button's title); null when it has none. */
export function replyText(data: { messageType?: string; message?: Record<string, any> } | undefined): string | null {
  const message = data?.message ?? {};
  if (typeof message.conversation === 'string') return message.conversation;
  const node = data?.messageType ? message[data.messageType] : undefined;
  if (node && typeof node === 'object') {
    for (const field of ['text', 'caption', 'selectedDisplayText', 'title']) if (typeof node[field] === 'string') return node[field];
  }
  return null;
}
