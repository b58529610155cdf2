/**
 * A new message template in its common shape: an optional text header, the body with numbered
 * variables (`{{1}}`, `{{2}}`) and an example value for each (the platform's reviewers read
 * them), an optional footer and quick-reply buttons. The service checks the definition and
 * lists every problem at once; they show under the form.
 */
import { useState } from 'preact/hooks';
import { post } from '../api.ts';
import { Button, Card, ErrorNote, Notice, SelectField, TextArea, TextField } from '../components.tsx';
import { useAction } from '../data.ts';
import type { Template } from './templates.tsx';

const CATEGORIES = [
  { value: 'UTILITY', label: 'Utility: about an order, account or request' },
  { value: 'MARKETING', label: 'Marketing: offers and news' },
  { value: 'AUTHENTICATION', label: 'Authentication: one-time codes' },
] as const;
type Category = (typeof CATEGORIES)[number]['value'];

/** The distinct `{{n}}` of a text, in order: one example value each. */
function variablesIn(text: string): number[] {
  return [...new Set([...text.matchAll(/\{\{\s*(\d+)\s*\}\}/g)].map((m) => Number(m[1])))].sort((a, b) => a - b);
}

export function NewTemplate({ connectionId, onCreated }: { connectionId: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [language, setLanguage] = useState('en_US');
  const [category, setCategory] = useState<Category>('UTILITY');
  const [header, setHeader] = useState('');
  const [headerExample, setHeaderExample] = useState('');
  const [body, setBody] = useState('');
  const [examples, setExamples] = useState<Record<number, string>>({});
  const [footer, setFooter] = useState('');
  const [buttons, setButtons] = useState('');
  const [created, setCreated] = useState<Template | undefined>();
  const action = useAction();

  const bodyVariables = variablesIn(body);
  const headerHasVariable = variablesIn(header).length > 0;

  const submit = async (event: Event) => {
    event.preventDefault();
    const components: Record<string, unknown>[] = [];
    if (header.trim()) components.push({ type: 'HEADER', format: 'TEXT', text: header.trim(), ...(headerHasVariable && { example: { header_text: [headerExample] } }) });
    components.push({ type: 'BODY', text: body, ...(bodyVariables.length > 0 && { example: { body_text: [bodyVariables.map((n) => examples[n] ?? '')] } }) });
    if (footer.trim()) components.push({ type: 'FOOTER', text: footer.trim() });
    const replies = buttons.split('\n').map((b) => b.trim()).filter(Boolean);
    if (replies.length > 0) components.push({ type: 'BUTTONS', buttons: replies.map((text) => ({ type: 'QUICK_REPLY', text })) });
    const template = await action.run(() => post<Template>(`/v3/connections/${connectionId}/templates`, { name: name.trim(), language: language.trim(), category, components }));
    if (template) {
      setCreated(template);
      setName('');
      setHeader('');
      setHeaderExample('');
      setBody('');
      setExamples({});
      setFooter('');
      setButtons('');
      onCreated();
    }
  };

  return (
    <Card title="New template">
      {created && (
        <Notice>
          Template <span class="mono">{created.name}</span> submitted for review: it is {created.status}. “Refresh statuses” asks the platform for the outcome.
        </Notice>
      )}
      <form onSubmit={submit} class="template-form">
        <div class="grid">
          <TextField label="Template name" value={name} onValue={setName} required pattern="[a-z0-9_]+" hint="Lower-case letters, digits and underscores." />
          <TextField label="Language" value={language} onValue={setLanguage} required hint="A code such as en_US or pt_BR." />
          <SelectField label="Category" value={category} options={CATEGORIES} onValue={setCategory} />
        </div>
        <TextField label="Header (optional)" value={header} onValue={setHeader} maxLength={60} hint="Text up to 60 characters; at most one variable, {{1}}." />
        {headerHasVariable && <TextField label="Header example for {{1}}" value={headerExample} onValue={setHeaderExample} required />}
        <TextArea label="Body" value={body} onValue={setBody} rows={4} required maxLength={1024} hint="Variables are numbered {{1}}, {{2}}… without gaps; give an example of each below." />
        {bodyVariables.map((n) => (
          <TextField label={`Example for {{${n}}}`} value={examples[n] ?? ''} onValue={(value) => setExamples({ ...examples, [n]: value })} required />
        ))}
        <TextField label="Footer (optional)" value={footer} onValue={setFooter} maxLength={60} />
        <TextArea label="Quick-reply buttons (optional)" value={buttons} onValue={setButtons} rows={3} hint="One button label a line, up to 25 characters each." />
        <ErrorNote error={action.error} prefix="The template was not submitted." />
        <div class="form-actions">
          <Button type="submit" pending={action.pending}>
            Submit for review
          </Button>
        </div>
      </form>
    </Card>
  );
}
