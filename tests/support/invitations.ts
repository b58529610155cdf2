import { expect } from 'bun:test';

/**
 * Answers an invitation the way a browser does, over HTTP: opens the acceptance page (which
 * sets the form cookie), then posts its form. `baseUrl` replaces the origin of the link (the
 * link carries PUBLIC_URL).
 */
export async function answerInvitation(
  baseUrl: string,
  invitationUrl: string,
  input: { action?: 'accept' | 'decline' | 'takeover'; password?: string; confirmation?: string; name?: string } = {},
): Promise<{ status: number; text: string; cookies: string[] }> {
  const link = new URL(invitationUrl);
  const page = await fetch(`${baseUrl}${link.pathname}${link.search}`);
  const html = await page.text();
  if (page.status !== 200) return { status: page.status, text: html, cookies: [] };
  const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ');
  const csrf = html.match(/name="csrf" value="([^"]+)"/)![1]!;
  const token = link.searchParams.get('token') ?? '';
  const password = input.password ?? '';
  const posted = await fetch(`${baseUrl}/invitations/accept`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({
      csrf,
      token,
      action: input.action ?? 'accept',
      password,
      password_confirm: input.confirmation ?? password,
      ...(input.name !== undefined && { name: input.name }),
    }),
  });
  return { status: posted.status, text: await posted.text(), cookies: posted.headers.getSetCookie() };
}

/** The password test helpers give the accounts they create by accepting invitations. */
export const TEST_MEMBER_PASSWORD = 'a test member password';

/**
 * Invites `email` over HTTP with `apikey` (POST /v3/members, no SMTP_URL), accepts the link as
 * a new person with TEST_MEMBER_PASSWORD, and answers their user id (from GET /v3/members).
 */
export async function inviteAndAccept(baseUrl: string, apikey: string, email: string, roles: string[]): Promise<string> {
  const json = { apikey, 'content-type': 'application/json' };
  const invited = await fetch(`${baseUrl}/v3/members`, { method: 'POST', headers: json, body: JSON.stringify({ email, roles }) });
  const invitation = (await invited.json()) as { invitationUrl?: string };
  expect(invited.status).toBe(201);
  expect(typeof invitation.invitationUrl).toBe('string');
  const accepted = await answerInvitation(baseUrl, invitation.invitationUrl!, { password: TEST_MEMBER_PASSWORD });
  if (accepted.status !== 200) throw new Error(`accepting the invitation of ${email} answered ${accepted.status}: ${accepted.text.slice(0, 300)}`);
  const listed = await fetch(`${baseUrl}/v3/members?per_page=100&s=${encodeURIComponent(email)}`, { headers: { apikey } });
  const members = (await listed.json()) as { data: Array<{ userId: string; email: string }> };
  const member = members.data.find((m) => m.email === email.trim().toLowerCase());
  expect(member).toBeDefined();
  return member!.userId;
}
