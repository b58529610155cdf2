import nodemailer from 'nodemailer';
import type { Mailer } from '../../core/identity/invitation-mail.ts';

/**
 * Mail through the SMTP server of `SMTP_URL` (`smtp://` with STARTTLS when the server offers it,
 * or `smtps://` for TLS from the start; `user:pass@` when it needs a login).
 */
export function smtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async send(message) {
      await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text });
    },
  };
}

/** `MAIL_FROM`, or `Switchboard <no-reply@host of PUBLIC_URL>`. */
export function defaultMailFrom(publicUrl: string): string {
  let host = 'localhost';
  try {
    host = new URL(publicUrl).hostname || host;
  } catch {}
  return `Switchboard <no-reply@${host.replace(/^\[|\]$/g, '')}>`;
}
