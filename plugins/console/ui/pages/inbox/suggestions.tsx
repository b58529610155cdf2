/**
 * The composer's pop-up choices (canned responses after `/`, members after `@`): a listbox the
 * textarea drives with arrow keys, Enter or Tab to take one, Escape to close. Focus stays in the
 * textarea; the highlighted option is announced through `aria-activedescendant`.
 */
import type { ComponentChildren } from 'preact';

export interface Choice<T> {
  key: string;
  value: T;
  label: ComponentChildren;
}

export const SUGGESTIONS_ID = 'composer-suggestions';

export function optionId(index: number): string {
  return `${SUGGESTIONS_ID}-${index}`;
}

export function Suggestions<T>({ title, choices, active, onPick, empty }: { title: string; choices: Choice<T>[]; active: number; onPick: (value: T) => void; empty: string }) {
  return (
    <div class="suggestions">
      <p class="suggestions-title" id={`${SUGGESTIONS_ID}-title`}>
        {title}
      </p>
      {choices.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <ul role="listbox" id={SUGGESTIONS_ID} aria-labelledby={`${SUGGESTIONS_ID}-title`}>
          {choices.map((c, i) => (
            <li
              role="option"
              id={optionId(i)}
              aria-selected={i === active}
              class={i === active ? 'active' : undefined}
              // mousedown, not click: the textarea keeps its focus and caret.
              onMouseDown={(e) => {
                e.preventDefault();
                onPick(c.value);
              }}
            >
              {c.label}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The next highlighted index for an arrow key, wrapping around; undefined for other keys. */
export function movedIndex(key: string, active: number, count: number): number | undefined {
  if (count === 0) return undefined;
  if (key === 'ArrowDown') return (active + 1) % count;
  if (key === 'ArrowUp') return (active - 1 + count) % count;
  return undefined;
}
