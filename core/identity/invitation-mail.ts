import type { Role } from './roles.ts';

/** A plain-text mail to one recipient. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends mail (SMTP_URL). Throws when the server did not take the message. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** The invitation mail: who invites whom to which workspace, and the link to answer it. */
export function invitationMail(input: { to: string; workspaceName: string; inviterName: string | null; roles: Role[]; url: string; expiresAt: Date }): MailMessage {
  const who = input.inviterName ? `${input.inviterName} invites you` : 'You are invited';
  return {
    to: input.to,
    subject: `Invitation to join ${input.workspaceName} on Switchboard`,
    text: [
      `${who} to join the workspace "${input.workspaceName}" on Switchboard as ${input.roles.join(', ')}.`,
      '',
      'Accept or decline the invitation here:',
      input.url,
      '',
      `The link works until ${input.expiresAt.toISOString()}, for this invitation only.`,
      'If you did not expect this invitation, ignore this mail: nothing happens unless you accept.',
    ].join('\n'),
  };
}
