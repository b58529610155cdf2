/** The last cell of a settings table's row: Edit, and Delete asked twice; a refused delete says why beneath. */
import { del } from '../api.ts';
import { Button, ConfirmButton, ErrorNote } from '../components.tsx';
import { useAction } from '../data.ts';

export function RowActions({ name, path, confirm = 'Delete it?', onEdit, onDeleted }: { name: string; path: string; confirm?: string; onEdit: () => void; onDeleted: () => Promise<void> }) {
  const remove = useAction();
  return (
    <td>
      <div class="actions">
        <Button variant="secondary" onClick={onEdit} aria-label={`Edit ${name}`}>
          Edit
        </Button>
        <ConfirmButton
          confirm={confirm}
          pending={remove.pending}
          onConfirm={async () => {
            if (await remove.run(() => del(path))) await onDeleted();
          }}
        >
          Delete
        </ConfirmButton>
      </div>
      <ErrorNote error={remove.error} />
    </td>
  );
}
