import { createServer, type Socket } from 'node:net';

/**
 * A small SMTP server (RFC 5321, the subset a client needs to hand over a message) that keeps
 * every message it receives: `SMTP_URL=receiver.url` makes the service mail it. It offers no
 * STARTTLS and takes any AUTH PLAIN/LOGIN login, recording the user name.
 */
export interface ReceivedMail {
  from: string;
  to: string[];
  /** The raw message as sent (headers and body, dot-stuffing undone). */
  raw: string;
  /** Headers by lower-case name. */
  headers: Record<string, string>;
  /** The body with quoted-printable or base64 transfer encoding undone. */
  text: string;
  authUser?: string;
}

export interface SmtpReceiver {
  url: string;
  messages: ReceivedMail[];
  /** While true, every message is refused (550), as a server that will not relay does. */
  refusing: boolean;
  /** Resolves with the next message to `to` (or one already received). */
  next(to: string): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startSmtpReceiver(options: { user?: string; password?: string } = {}): Promise<SmtpReceiver> {
  const messages: ReceivedMail[] = [];
  const waiters: Array<{ to: string; resolve: (mail: ReceivedMail) => void }> = [];
  const sockets = new Set<Socket>();
  const receiver = { refusing: false } as SmtpReceiver;

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffer = '';
    let envelope: { from: string; to: string[]; authUser?: string } = { from: '', to: [] };
    let data: string[] | undefined;
    let authStep: 'user' | 'password' | undefined;
    const say = (line: string) => socket.write(`${line}\r\n`);
    say('220 switchboard-test-smtp ESMTP');

    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (let at = buffer.indexOf('\r\n'); at >= 0; at = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        if (data) {
          if (line === '.') {
            const mail = parse(envelope, data.join('\r\n'));
            data = undefined;
            envelope = { from: '', to: [], authUser: envelope.authUser };
            messages.push(mail);
            for (const waiter of waiters.filter((w) => mail.to.includes(w.to))) {
              waiters.splice(waiters.indexOf(waiter), 1);
              waiter.resolve(mail);
            }
            say('250 OK: queued');
          } else data.push(line.startsWith('..') ? line.slice(1) : line);
          continue;
        }
        if (authStep) {
          const decoded = Buffer.from(line, 'base64').toString('utf8');
          if (authStep === 'user') {
            envelope.authUser = decoded;
            authStep = 'password';
            say(`334 ${Buffer.from('Password:').toString('base64')}`);
          } else {
            authStep = undefined;
            say(options.password === undefined || decoded === options.password ? '235 Authentication succeeded' : '535 Authentication failed');
          }
          continue;
        }
        const [verb = '', ...rest] = line.split(' ');
        const argument = rest.join(' ');
        switch (verb.toUpperCase()) {
          case 'EHLO':
            socket.write('250-switchboard-test-smtp\r\n250-8BITMIME\r\n250-SMTPUTF8\r\n250 AUTH PLAIN LOGIN\r\n');
            break;
          case 'HELO':
            say('250 switchboard-test-smtp');
            break;
          case 'AUTH': {
            const [mechanism = '', initial] = argument.split(' ');
            if (mechanism.toUpperCase() === 'PLAIN' && initial) {
              const [, user = '', password = ''] = Buffer.from(initial, 'base64').toString('utf8').split('\u0000');
              envelope.authUser = user;
              say(options.password === undefined || password === options.password ? '235 Authentication succeeded' : '535 Authentication failed');
            } else if (mechanism.toUpperCase() === 'LOGIN') {
              authStep = 'user';
              say(`334 ${Buffer.from('Username:').toString('base64')}`);
            } else say('504 Unrecognized authentication type');
            break;
          }
          case 'MAIL':
            if (receiver.refusing) {
              say('550 Relaying refused');
              break;
            }
            envelope.from = address(argument);
            say('250 OK');
            break;
          case 'RCPT':
            envelope.to.push(address(argument));
            say('250 OK');
            break;
          case 'DATA':
            data = [];
            say('354 End data with <CR><LF>.<CR><LF>');
            break;
          case 'RSET':
            envelope = { from: '', to: [], authUser: envelope.authUser };
            say('250 OK');
            break;
          case 'NOOP':
            say('250 OK');
            break;
          case 'QUIT':
            say('221 Bye');
            socket.end();
            break;
          default:
            say('502 Command not implemented');
        }
      }
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const login = options.user !== undefined ? `${encodeURIComponent(options.user)}:${encodeURIComponent(options.password ?? '')}@` : '';
  Object.assign(receiver, {
    url: `smtp://${login}127.0.0.1:${port}`,
    messages,
    next(to: string) {
      const found = messages.find((m) => m.to.includes(to));
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ to, resolve }));
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return receiver;
}

function address(argument: string): string {
  return (argument.match(/<([^>]*)>/)?.[1] ?? argument.replace(/^(FROM|TO):/i, '')).trim().toLowerCase();
}

function parse(envelope: { from: string; to: string[]; authUser?: string }, raw: string): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = split >= 0 ? raw.slice(0, split) : raw;
  const body = split >= 0 ? raw.slice(split + 4) : '';
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const encoding = (headers['content-transfer-encoding'] ?? '').toLowerCase();
  let bytes: Buffer;
  if (encoding === 'quoted-printable') {
    bytes = Buffer.from(body.replace(/=\r\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
  } else if (encoding === 'base64') {
    bytes = Buffer.from(body.replace(/\s+/g, ''), 'base64');
  } else bytes = Buffer.from(body, 'latin1');
  return { from: envelope.from, to: [...envelope.to], raw, headers, text: bytes.toString('utf8'), authUser: envelope.authUser };
}
