/**
 * The inbox's keys: the list's own (j, k, f, ?) are handled here; the conversation pane handles
 * its own (r, n, e, Esc) and the help dialog lists them all. Keys typed into a field, or with
 * Ctrl, Alt or Meta, are left alone.
 */
import { useEffect, useRef } from 'preact/hooks';
import { Dialog } from '../../components.tsx';

export const SHORTCUTS: Array<[key: string, what: string]> = [
  ['j', 'Next conversation'],
  ['k', 'Previous conversation'],
  ['f', 'Search conversations'],
  ['r', 'Write a reply'],
  ['n', 'Write a private note'],
  ['e', 'Resolve or reopen the conversation'],
  ['Esc', 'Leave the composer'],
  ['?', 'This list of shortcuts'],
];

/** Whether a key press belongs to what has focus (typing), not to the inbox. */
export function typing(event: KeyboardEvent): boolean {
  const target = event.target as HTMLElement | null;
  if (!target) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName) || Boolean(target.closest('dialog[open]'));
}

export function useListShortcuts(handlers: Record<string, () => void>): void {
  const latest = useRef(handlers);
  latest.current = handlers;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented || typing(event)) return;
      const handler = latest.current[event.key];
      if (!handler) return;
      event.preventDefault();
      handler();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);
}

export function ShortcutHelp({ open, onClose }: { open: boolean; onClose: () => void }) {
  return (
    <Dialog title="Keyboard shortcuts" open={open} onClose={onClose}>
      <dl class="shortcut-list">
        {SHORTCUTS.map(([key, what]) => (
          <>
            <dt>
              <kbd>{key}</kbd>
            </dt>
            <dd>{what}</dd>
          </>
        ))}
      </dl>
      <p class="muted">Keys typed in a text box stay in it.</p>
    </Dialog>
  );
}
