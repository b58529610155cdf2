/**
 * Importing contacts (`#/contacts/import`, Managers and above): a CSV file chosen or pasted goes
 * as is to `POST /v3/helpdesk/contacts/import`; the answer is shown row by row: how many were
 * created and updated, and each skipped row with its line and reason.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Button, Card, ErrorNote, PageHeader, Table } from '../components.tsx';
import { useAction } from '../data.ts';
import { href } from '../router.ts';
import { useSession } from '../session.ts';
import { MAX_IMPORT_BYTES, type ImportReport } from './contacts-model.ts';

const EXAMPLE = 'name,phone,email,company\nAna Souza,+55 11 99999-0001,ana@example.com,Acme';

export function ContactImportPage() {
  const session = useSession();
  const [text, setText] = useState('');
  const [fileName, setFileName] = useState<string | undefined>();
  const [tooBig, setTooBig] = useState(false);
  const [report, setReport] = useState<ImportReport | undefined>();
  const importing = useAction();
  const back = (
    <a href={href('contacts')} class="back-link">
      ← All contacts
    </a>
  );
  if (!session.may('helpdesk.configure', 'write')) {
    return (
      <>
        <PageHeader title="Import contacts" description={back} />
        <Card>
          <p>Importing contacts is for Managers, Admins and the Owner.</p>
        </Card>
      </>
    );
  }

  const choose = async (file: File | undefined) => {
    setReport(undefined);
    importing.clear();
    if (!file) return;
    setTooBig(file.size > MAX_IMPORT_BYTES);
    setFileName(file.name);
    setText(file.size > MAX_IMPORT_BYTES ? '' : await file.text());
  };
  const send = async (event: Event) => {
    event.preventDefault();
    if (!text.trim() || tooBig) return;
    setReport(undefined);
    const answer = await importing.run(() => api<ImportReport>('POST', '/v3/helpdesk/contacts/import', undefined, { raw: { body: text, contentType: 'text/csv' } }));
    if (answer) setReport(answer);
  };
  const bytes = new Blob([text]).size;

  return (
    <>
      <PageHeader title="Import contacts" description={back} />
      <Card title="CSV file">
        <form class="import-form" onSubmit={send}>
          <p class="muted">
            A header row names the columns: <code>name</code>, <code>phone</code> and <code>email</code> (phone or email required), any other column becomes a custom attribute. Each row updates
            the contact with its phone, else the one with its email, else makes a new one. Up to 10,000 rows and 2 MiB; a row that cannot be used is skipped and listed below, the others still
            count.
          </p>
          <div class="field">
            <label for="import-file">Upload a file</label>
            <input id="import-file" type="file" accept=".csv,text/csv,text/plain" onChange={(e) => choose(e.currentTarget.files?.[0])} />
          </div>
          <div class="field">
            <label for="import-text">Or paste the CSV</label>
            <textarea
              id="import-text"
              rows={8}
              value={text}
              placeholder={EXAMPLE}
              spellcheck={false}
              onInput={(e) => {
                setText(e.currentTarget.value);
                setFileName(undefined);
                setTooBig(false);
                setReport(undefined);
              }}
            />
            <p class="hint">
              {fileName ? `${fileName}: ` : ''}
              {text ? `${Math.max(0, text.trim().split(/\r?\n/).length - 1).toLocaleString()} rows under the header, ${(bytes / 1024).toFixed(1)} KiB` : 'Nothing yet.'}
            </p>
          </div>
          {(tooBig || bytes > MAX_IMPORT_BYTES) && (
            <div class="error" role="alert">
              The file is larger than 2 MiB: split it into smaller files.
            </div>
          )}
          <ErrorNote error={importing.error} prefix="Not imported." />
          <div class="form-actions">
            <Button type="submit" pending={importing.pending} disabled={!text.trim() || tooBig || bytes > MAX_IMPORT_BYTES}>
              Import contacts
            </Button>
          </div>
        </form>
      </Card>
      {report && <ImportResult report={report} />}
    </>
  );
}

function ImportResult({ report }: { report: ImportReport }) {
  return (
    <Card title="Result">
      <dl class="import-counts" aria-label="Import result">
        <div>
          <dt>Created</dt>
          <dd>{report.created.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Updated</dt>
          <dd>{report.updated.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Skipped</dt>
          <dd>{report.skipped.length.toLocaleString()}</dd>
        </div>
      </dl>
      {report.skipped.length === 0 ? (
        <p role="status">Every row was used.</p>
      ) : (
        <Table caption="Skipped rows" head={['Line', 'Reason']}>
          {report.skipped.map((s) => (
            <tr>
              <td>{s.line}</td>
              <td>{s.reason}</td>
            </tr>
          ))}
        </Table>
      )}
      <p>
        <a href={href('contacts')}>See the contacts</a>
      </p>
    </Card>
  );
}
