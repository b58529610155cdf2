/**
 * Picking a pre-approved template and filling its variables: what an official connection
 * sends once the contact's 24-hour window is closed. The templates are the inbox's
 * (`GET /v3/helpdesk/inboxes/{id}/templates`, readable by whoever works the inbox); the send's
 * components are built by the same code the service uses to describe the fields
 * (core/templates/template-fields.ts), and a preview shows the body as the contact will read it.
 */
import { useEffect, useId, useMemo, useState } from 'preact/hooks';
import { get } from '../../api.ts';
import { ErrorNote, Loading, SelectField, TextField } from '../../components.tsx';
import { useLoad } from '../../data.ts';
import { templateSendComponents, type TemplateField } from '../../../../../core/templates/template-fields.ts';
import { fillVariables } from '../../../../../core/templates/template-text.ts';

export interface InboxTemplate {
  id: string;
  name: string;
  language: string;
  category: string;
  body: string | null;
  fields: TemplateField[];
  fillable: boolean;
}

export interface InboxTemplates {
  /** Whether the inbox is on an official connection (the only kind that sends templates). */
  official: boolean;
  data: InboxTemplate[];
}

/** What a picked and filled template sends (`template` of POST …/conversations and …/messages). */
export interface TemplateSend {
  name: string;
  language: string;
  components: unknown[];
}

/** The inbox's templates; undefined while no inbox is chosen. */
export function useInboxTemplates(inboxId: string | undefined) {
  return useLoad(async () => (inboxId ? get<InboxTemplates>(`/v3/helpdesk/inboxes/${encodeURIComponent(inboxId)}/templates`) : undefined), [inboxId]);
}

const keyOf = (t: InboxTemplate) => `${t.name}\u0000${t.language}`;

/**
 * The picker: a template choice, one labelled field per variable, a preview. `onChange` gets
 * the send once every field has a value (undefined until then).
 */
export function TemplatePicker({ templates, onChange }: { templates: ReturnType<typeof useInboxTemplates>; onChange: (send: TemplateSend | undefined) => void }) {
  const hintId = useId();
  const list = templates.data?.data;
  const [key, setKey] = useState('');
  const [values, setValues] = useState<string[]>([]);
  const chosen = list?.find((t) => keyOf(t) === key);

  const send = useMemo<TemplateSend | undefined>(() => {
    if (!chosen || !chosen.fillable) return undefined;
    if (chosen.fields.some((_, i) => !(values[i] ?? '').trim())) return undefined;
    return { name: chosen.name, language: chosen.language, components: templateSendComponents(chosen.fields, values) };
  }, [chosen, values]);
  useEffect(() => onChange(send), [send]);

  if (!templates.data) {
    return templates.error ? <ErrorNote error={templates.error} prefix="The templates could not be read." /> : <Loading rows={1} label="Loading templates" />;
  }
  if (!list || list.length === 0) {
    return (
      <p class="warning" role="status">
        This inbox's connection has no approved template yet. A Manager or Admin creates them under Templates &amp; Flows; the platform approves them.
      </p>
    );
  }
  const preview = chosen?.body ? fillVariables(chosen.body, bodyValues(chosen.fields, values)) : undefined;
  return (
    <div class="template-picker">
      <SelectField
        label="Template"
        value={key}
        options={[{ value: '', label: 'Choose a template…' }, ...list.map((t) => ({ value: keyOf(t), label: `${t.name} · ${t.language} · ${t.category.toLowerCase()}` }))]}
        onValue={(next) => {
          setKey(next);
          setValues([]);
        }}
      />
      {chosen && !chosen.fillable && <p class="warning">This template has parts the console cannot fill in (a carousel): send it through the messaging API.</p>}
      {chosen?.fillable &&
        chosen.fields.map((field, i) => (
          <TextField
            key={`${key}-${i}`}
            label={field.label}
            value={values[i] ?? ''}
            required
            inputMode={field.type === 'location' ? 'decimal' : undefined}
            type={['image', 'video', 'document'].includes(field.type) ? 'url' : 'text'}
            placeholder={field.example ? `e.g. ${field.example}` : undefined}
            onValue={(value) => setValues((now) => Object.assign([...now], { [i]: value }))}
          />
        ))}
      {chosen?.fillable && chosen.fields.length === 0 && <p class="hint">This template has nothing to fill in.</p>}
      {preview !== undefined && (
        <figure class="template-preview" aria-describedby={hintId}>
          <figcaption id={hintId} class="hint">
            The contact reads
          </figcaption>
          <p>{preview}</p>
        </figure>
      )}
    </div>
  );
}

/** The body's values by variable number, a variable not filled in left as written. */
function bodyValues(fields: TemplateField[], values: string[]): string[] {
  const byNumber: string[] = [];
  fields.forEach((f, i) => {
    const value = (values[i] ?? '').trim();
    if (f.component === 'body' && f.variable !== null && value) byNumber[f.variable - 1] = value;
  });
  return byNumber;
}
