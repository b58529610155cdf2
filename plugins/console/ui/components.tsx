/**
 * The console's building blocks: page header, cards, tables, fields with labels, buttons,
 * status badges, empty states, errors and a dialog. Every control is a native element with a
 * visible label, so keyboards and screen readers work without extra code.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';

export function PageHeader({ title, description, actions }: { title: string; description?: ComponentChildren; actions?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Switchboard`;
  }, [title]);
  return (
    <header class="page-header">
      <div>
        <h1>{title}</h1>
        {description && <p class="muted">{description}</p>}
      </div>
      {actions && <div class="actions">{actions}</div>}
    </header>
  );
}

export function Card({ title, children, actions, id }: { title?: string; children: ComponentChildren; actions?: ComponentChildren; id?: string }) {
  return (
    <section class="card" id={id} aria-label={title}>
      {(title || actions) && (
        <div class="card-head">
          {title && <h2>{title}</h2>}
          {actions && <div class="actions">{actions}</div>}
        </div>
      )}
      {children}
    </section>
  );
}

/** What a list shows when it has nothing yet: what the thing is, and how to make the first one. */
export function EmptyState({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty" role="status">
      <p class="empty-title">{title}</p>
      {children && <div class="muted">{children}</div>}
    </div>
  );
}

/** An error as the service gave it (each of a 400's messages on its own line). */
export function ErrorNote({ error, prefix }: { error: Error | undefined; prefix?: string }) {
  if (!error) return null;
  const messages = error instanceof ApiError ? error.messages : [error.message];
  const denied = error instanceof ApiError && error.status === 403;
  return (
    <div class="error" role="alert">
      {prefix && <strong>{prefix} </strong>}
      {denied && <strong>Not allowed: </strong>}
      {messages.length === 1 ? messages[0] : <ul>{messages.map((m) => <li>{m}</li>)}</ul>}
    </div>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <div class="notice" role="status">
      {children}
    </div>
  );
}

/** Placeholder rows of a fixed height while the first answer loads. */
export function Loading({ rows = 3, label = 'Loading' }: { rows?: number; label?: string }) {
  return (
    <div class="loading" aria-busy="true" aria-label={label}>
      {Array.from({ length: rows }, () => (
        <div class="skeleton" />
      ))}
    </div>
  );
}

type InputProps = JSX.InputHTMLAttributes<HTMLInputElement> & { label: string; hint?: ComponentChildren };

/** A labelled input; `onValue` gets the text as it is typed. */
export function TextField({ label, hint, onValue, ...input }: InputProps & { onValue?: (value: string) => void }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} type="text" {...input} onInput={(e) => onValue?.((e.currentTarget as HTMLInputElement).value)} aria-describedby={hint ? `${id}-hint` : undefined} />
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}

export function TextArea({
  label,
  hint,
  value,
  onValue,
  rows = 4,
  ...rest
}: { label: string; hint?: ComponentChildren; value: string; onValue: (value: string) => void; rows?: number } & Omit<JSX.TextareaHTMLAttributes<HTMLTextAreaElement>, 'value'>) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea id={id} rows={rows} value={value} onInput={(e) => onValue((e.currentTarget as HTMLTextAreaElement).value)} {...rest} />
      {hint && <p class="hint">{hint}</p>}
    </div>
  );
}

export function SelectField<V extends string>({
  label,
  value,
  options,
  onValue,
  hint,
}: {
  label: string;
  value: V;
  options: readonly { value: V; label: string }[];
  onValue: (value: V) => void;
  hint?: ComponentChildren;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onValue((e.currentTarget as HTMLSelectElement).value as V)}>
        {options.map((o) => (
          <option value={o.value}>{o.label}</option>
        ))}
      </select>
      {hint && <p class="hint">{hint}</p>}
    </div>
  );
}

export function Checkbox({ label, checked, onChecked, hint }: { label: string; checked: boolean; onChecked: (checked: boolean) => void; hint?: string }) {
  const id = useId();
  return (
    <div class="check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChecked((e.currentTarget as HTMLInputElement).checked)} />
      <label for={id}>
        {label}
        {hint && <small class="hint">{hint}</small>}
      </label>
    </div>
  );
}

type ButtonProps = Omit<JSX.ButtonHTMLAttributes<HTMLButtonElement>, 'type'> & { variant?: 'primary' | 'secondary' | 'danger' | 'link'; pending?: boolean; type?: 'button' | 'submit' };

export function Button({ variant = 'primary', pending, children, type = 'button', disabled, ...rest }: ButtonProps) {
  return (
    <button type={type} class={`btn ${variant}`} disabled={Boolean(disabled) || pending} aria-busy={pending ? 'true' : undefined} {...rest}>
      {children}
    </button>
  );
}

/** A button that asks once more before a destructive write (a second click within 4 seconds). */
export function ConfirmButton({ children, confirm, onConfirm, pending, variant = 'danger' }: { children: ComponentChildren; confirm: string; onConfirm: () => void; pending?: boolean; variant?: ButtonProps['variant'] }) {
  const [asking, setAsking] = useState(false);
  useEffect(() => {
    if (!asking) return;
    const timer = setTimeout(() => setAsking(false), 4000);
    return () => clearTimeout(timer);
  }, [asking]);
  return (
    <Button
      variant={variant}
      pending={pending}
      onClick={() => {
        if (asking) {
          setAsking(false);
          onConfirm();
        } else setAsking(true);
      }}
    >
      {asking ? confirm : children}
    </Button>
  );
}

const TONES: Record<string, string> = {
  CONNECTED: 'good', OPEN: 'good', ACTIVE: 'good', SENT: 'good', DELIVERED: 'good', READ: 'good', COMPLETED: 'good', APPROVED: 'good', ACCEPTED: 'good', SUCCEEDED: 'good', DELIVERED_OK: 'good', RUNNING: 'good', PUBLISHED: 'good',
  CONNECTING: 'busy', QR_PENDING: 'busy', PENDING: 'busy', QUEUED: 'busy', SCHEDULED: 'busy', PAUSED: 'busy', DRAFT: 'neutral', RETRYING: 'busy',
  DISCONNECTED: 'neutral', LOGGED_OUT: 'neutral', CANCELLED: 'neutral', CANCELED: 'neutral', EXPIRED: 'neutral', REVOKED: 'neutral',
  FAILED: 'bad', ERROR: 'bad', REJECTED: 'bad', BANNED: 'bad', DEAD: 'bad',
};

/** A status word in a colour that matches its meaning, always with the word itself (never colour alone). */
export function StatusBadge({ status }: { status: string | undefined | null }) {
  const word = status ?? 'UNKNOWN';
  return <span class={`badge ${TONES[word.toUpperCase()] ?? 'neutral'}`}>{word}</span>;
}

/** A native modal dialog: focus moves into it, Escape closes it, the page behind is inert. */
export function Dialog({ title, open, onClose, children }: { title: string; open: boolean; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      <div class="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" class="btn link" aria-label="Close" onClick={onClose}>
          ✕
        </button>
      </div>
      {open && children}
    </dialog>
  );
}

/** A secret shown once (a token, a signing secret): selectable, with a copy button. */
export function SecretBox({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <div class="secret">
        <input id={id} type="text" readOnly value={value} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
        <Button
          variant="secondary"
          onClick={async () => {
            await navigator.clipboard?.writeText(value).catch(() => undefined);
            setCopied(true);
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </Button>
      </div>
    </div>
  );
}

/** A table that scrolls sideways on a narrow screen instead of breaking the page. */
export function Table({ caption, head, children }: { caption: string; head: string[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {head.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** A date and time in the reader's own locale and zone; the exact instant on hover. */
export function When({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">—</span>;
  const date = new Date(at);
  return (
    <time dateTime={at} title={date.toISOString()}>
      {date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}
    </time>
  );
}

/** A number with the reader's digit grouping. */
export function Count({ value }: { value: number | null | undefined }) {
  return <>{value === null || value === undefined ? '—' : value.toLocaleString()}</>;
}
