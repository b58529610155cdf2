/**
 * Writing in a conversation: a reply to the contact or a private note for colleagues. `/` at
 * the start picks a canned response, `@` in a note picks a member to mention, files are uploaded
 * first and sent with the message. Enter sends, Shift+Enter starts a new line, Escape leaves.
 * Once an official connection's 24-hour window is closed, a reply can only be a pre-approved
 * template: the composer offers the inbox's templates to fill in and send instead.
 */
import type { RefObject } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { api, get, itemsOf, post } from '../../api.ts';
import { Button, ErrorNote } from '../../components.tsx';
import { useAction, useLoad } from '../../data.ts';
import { useTypingSignal } from './conversation-live.ts';
import type { CannedResponse, HelpdeskMessage, Person, SendWindow } from './conversation-model.ts';
import { mentionMarkup, mentionQuery } from './mention-text.ts';
import { readableSize } from './message-list.tsx';
import { movedIndex, optionId, Suggestions, SUGGESTIONS_ID, type Choice } from './suggestions.tsx';
import { TemplatePicker, useInboxTemplates, type TemplateSend } from './template-picker.tsx';

export type ComposerMode = 'reply' | 'note';

interface Upload {
  id: string;
  fileName: string;
  size: number | null;
}

/** Choices shown at most, so a long list never covers the page. */
const SHOWN = 8;

export function Composer({
  conversationId,
  inboxId,
  mode,
  onMode,
  field,
  mentionable,
  sendWindow,
  replyRefusal,
  onSent,
}: {
  conversationId: string;
  inboxId: string;
  mode: ComposerMode;
  onMode: (mode: ComposerMode) => void;
  field: RefObject<HTMLTextAreaElement>;
  mentionable: Person[];
  sendWindow: SendWindow | null | undefined;
  /** Why a reply cannot go out now (the AI holds the chat), if so; notes still can. */
  replyRefusal?: string;
  onSent: (message: HelpdeskMessage) => void;
}) {
  const base = `/v3/helpdesk/conversations/${encodeURIComponent(conversationId)}`;
  const [text, setText] = useState('');
  const [caret, setCaret] = useState(0);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [active, setActive] = useState(0);
  const [dismissed, setDismissed] = useState<string | undefined>();
  const sending = useAction();
  const uploading = useAction();
  const typing = useTypingSignal(conversationId);
  const canned = useLoad(async () => itemsOf<CannedResponse>(await get('/v3/helpdesk/canned-responses', { per_page: 100 })), []);

  const windowClosed = mode === 'reply' && sendWindow?.open === false;
  const refusal = mode === 'reply' ? (windowClosed ? 'Window closed: only a template can be sent.' : replyRefusal) : undefined;
  const picker = useMemo(() => pickerFor(text, caret, mode, canned.data ?? [], mentionable), [text, caret, mode, canned.data, mentionable]);
  const open = picker && dismissed !== picker.key ? picker : undefined;
  const highlighted = open ? Math.min(active, Math.max(open.choices.length - 1, 0)) : 0;

  const edit = (value: string, at: number) => {
    setText(value);
    setCaret(at);
    setActive(0);
    if (value) typing.typing();
    else typing.stopped();
  };

  const take = (choice: Choice<Pick>['value']) => {
    const textarea = field.current;
    if (choice.kind === 'canned') {
      edit(choice.content, choice.content.length);
      queueMicrotask(() => textarea?.setSelectionRange(choice.content.length, choice.content.length));
      return;
    }
    const inserted = `${mentionMarkup(choice.person)} `;
    const value = text.slice(0, choice.start) + inserted + text.slice(caret);
    const at = choice.start + inserted.length;
    edit(value, at);
    queueMicrotask(() => textarea?.setSelectionRange(at, at));
  };

  const send = async () => {
    if (sending.pending || refusal || (!text.trim() && uploads.length === 0)) return;
    const sent = await sending.run(() =>
      post<HelpdeskMessage>(`${base}/messages`, { content: text, private: mode === 'note', ...(uploads.length > 0 && { attachments: uploads.map((u) => ({ id: u.id })) }) }),
    );
    if (!sent) return;
    typing.stopped();
    setText('');
    setUploads([]);
    onSent(sent);
  };

  const attach = async (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) {
      const uploaded = await uploading.run(() =>
        api<Upload>('POST', `${base}/attachments`, undefined, {
          raw: { body: file, contentType: file.type || 'application/octet-stream' },
          headers: { 'x-file-name': encodeURIComponent(file.name) },
        }),
      );
      if (uploaded) setUploads((now) => [...now, { id: uploaded.id, fileName: uploaded.fileName ?? file.name, size: uploaded.size ?? file.size }]);
    }
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (open) {
      const moved = movedIndex(event.key, highlighted, open.choices.length);
      if (moved !== undefined) {
        event.preventDefault();
        setActive(moved);
        return;
      }
      if ((event.key === 'Enter' || event.key === 'Tab') && open.choices[highlighted]) {
        event.preventDefault();
        take(open.choices[highlighted]!.value);
        return;
      }
      if (event.key === 'Escape') {
        event.preventDefault();
        setDismissed(open.key);
        return;
      }
    }
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void send();
    } else if (event.key === 'Escape') {
      (event.currentTarget as HTMLTextAreaElement).blur();
      typing.stopped();
    }
  };

  const label = mode === 'note' ? 'Private note (only your colleagues see it; @ mentions a member)' : 'Reply to the contact (/ for canned responses)';
  return (
    <form
      class={`composer ${mode}`}
      aria-label="Composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <div class="composer-modes" role="group" aria-label="Write a">
        {(['reply', 'note'] as const).map((m) => (
          <button type="button" aria-pressed={mode === m} class={`mode ${mode === m ? 'on' : ''}`} onClick={() => (onMode(m), field.current?.focus())}>
            {m === 'reply' ? 'Reply' : 'Private note'}
          </button>
        ))}
      </div>
      <SendWindowLine window={sendWindow} />
      {windowClosed && <TemplateReply path={`${base}/messages`} inboxId={inboxId} onSent={onSent} />}
      {open && <Suggestions title={open.title} choices={open.choices.slice(0, SHOWN)} active={highlighted} onPick={take} empty={open.empty} />}
      <label for="composer-text" class="sr-only">
        {label}
      </label>
      <textarea
        id="composer-text"
        ref={field}
        rows={3}
        value={text}
        maxLength={4096}
        placeholder={mode === 'note' ? 'Write a private note… (@ to mention)' : 'Write a reply… (/ for canned responses)'}
        role="combobox"
        aria-expanded={Boolean(open)}
        aria-controls={open ? SUGGESTIONS_ID : undefined}
        aria-activedescendant={open && open.choices.length > 0 ? optionId(highlighted) : undefined}
        aria-autocomplete="list"
        onInput={(e) => edit(e.currentTarget.value, e.currentTarget.selectionStart ?? e.currentTarget.value.length)}
        onKeyUp={(e) => !['ArrowDown', 'ArrowUp'].includes(e.key) && setCaret(e.currentTarget.selectionStart ?? 0)}
        onClick={(e) => setCaret(e.currentTarget.selectionStart ?? 0)}
        onKeyDown={onKeyDown}
        onBlur={() => typing.stopped()}
      />
      {uploads.length > 0 && (
        <ul class="uploads" aria-label="Files to send">
          {uploads.map((u) => (
            <li>
              {u.fileName}
              {u.size !== null && ` (${readableSize(u.size)})`}
              <button type="button" class="btn link" aria-label={`Remove ${u.fileName}`} onClick={() => setUploads((now) => now.filter((x) => x.id !== u.id))}>
                ✕
              </button>
            </li>
          ))}
        </ul>
      )}
      {refusal && <p class="warning">{refusal}</p>}
      <ErrorNote error={uploading.error} prefix="The file was not uploaded." />
      <ErrorNote error={sending.error} prefix="Not sent." />
      <ErrorNote error={canned.error} prefix="Canned responses could not be read." />
      <div class="composer-actions">
        <label class="btn secondary attach">
          {uploading.pending ? 'Uploading…' : 'Attach file'}
          <input type="file" class="sr-only" multiple={mode === 'note'} onChange={(e) => void attach(e.currentTarget.files).then(() => (e.currentTarget.value = ''))} />
        </label>
        <span class="hint">Enter sends · Shift+Enter new line</span>
        <Button type="submit" pending={sending.pending} disabled={Boolean(refusal) || uploading.pending}>
          {mode === 'note' ? 'Add note' : 'Send'}
        </Button>
      </div>
    </form>
  );
}

/**
 * A template reply, for a closed window: the inbox's templates, their fields, "Send template".
 * It sits inside the composer's form, so Enter in one of its fields sends the template here
 * rather than submitting the (refused) text.
 */
function TemplateReply({ path, inboxId, onSent }: { path: string; inboxId: string; onSent: (message: HelpdeskMessage) => void }) {
  const templates = useInboxTemplates(inboxId);
  const [template, setTemplate] = useState<TemplateSend | undefined>();
  const [round, setRound] = useState(0);
  const sending = useAction();
  const send = async () => {
    if (!template || sending.pending) return;
    const sent = await sending.run(() => post<HelpdeskMessage>(path, { template }));
    if (!sent) return;
    // A fresh picker for the next one.
    setRound((n) => n + 1);
    onSent(sent);
  };
  return (
    <fieldset
      class="template-reply"
      onKeyDown={(e) => {
        if (e.key === 'Enter' && (e.target as HTMLElement).tagName === 'INPUT') {
          e.preventDefault();
          void send();
        }
      }}
    >
      <legend>Send a template instead</legend>
      <TemplatePicker key={round} templates={templates} onChange={setTemplate} />
      <ErrorNote error={sending.error} prefix="Template not sent." />
      {templates.data?.data.length ? (
        <Button onClick={() => void send()} pending={sending.pending} disabled={!template}>
          Send template
        </Button>
      ) : null}
    </fieldset>
  );
}

/** The 24-hour window of official connections, when the conversation carries it. */
function SendWindowLine({ window }: { window: SendWindow | null | undefined }) {
  if (!window) return null;
  if (!window.open) return <p class="window closed">Window closed: only a template can be sent</p>;
  if (!window.closesAt) return null;
  const minutes = Math.max(0, Math.round((new Date(window.closesAt).getTime() - Date.now()) / 60_000));
  return <p class="window open">Window closes in {minutes >= 60 ? `${Math.round(minutes / 60)} h` : `${minutes} min`}</p>;
}

type Pick = { kind: 'canned'; content: string } | { kind: 'mention'; person: Person; start: number };

interface Picker {
  /** What was typed to open it: Escape closes it until that changes. */
  key: string;
  title: string;
  empty: string;
  choices: Choice<Pick>[];
}

/** The picker the text asks for: canned responses after a leading `/`, members after `@` in a note. */
function pickerFor(text: string, caret: number, mode: ComposerMode, canned: CannedResponse[], people: Person[]): Picker | undefined {
  const slash = /^\/(\S*)$/.exec(text);
  if (slash) {
    const query = slash[1]!.toLowerCase();
    const found = canned.filter((c) => c.shortCode.toLowerCase().includes(query) || c.content.toLowerCase().includes(query));
    return {
      key: `/${query}`,
      title: 'Canned responses',
      empty: canned.length === 0 ? 'No canned responses yet.' : 'No canned response matches.',
      choices: found.map((c) => ({
        key: c.id,
        value: { kind: 'canned', content: c.content },
        label: (
          <>
            <strong>/{c.shortCode}</strong> <span class="muted">{c.content}</span>
          </>
        ),
      })),
    };
  }
  if (mode !== 'note') return undefined;
  const at = mentionQuery(text, caret);
  if (!at) return undefined;
  const query = at.query.toLowerCase();
  const found = people.filter((p) => p.name.toLowerCase().includes(query) || p.email.toLowerCase().includes(query));
  return {
    key: `@${at.start}:${query}`,
    title: 'Mention a member',
    empty: 'No member matches.',
    choices: found.map((p) => ({
      key: p.userId,
      value: { kind: 'mention', person: p, start: at.start },
      label: (
        <>
          <strong>{p.name}</strong> <span class="muted">{p.email}</span>
        </>
      ),
    })),
  };
}
