/** Pieces the campaign list and a campaign's page share: its progress bar, and the plugin-off notice. */
import { Card, EmptyState } from '../components.tsx';
import { type Campaign, handled } from './campaigns-model.ts';

/** Sent of the total, a bar of everything handled, and the failures when there are some. */
export function ProgressMeter({ campaign }: { campaign: Campaign }) {
  const p = campaign.progress;
  const share = p.total > 0 ? Math.round((handled(p) / p.total) * 100) : 0;
  return (
    <div>
      <div>
        {p.sent.toLocaleString()} of {p.total.toLocaleString()} sent
        {p.failed > 0 && <span class="muted"> · {p.failed.toLocaleString()} failed</span>}
      </div>
      <div class="meter" role="progressbar" aria-label={`${campaign.name}: recipients handled`} aria-valuemin={0} aria-valuemax={100} aria-valuenow={share}>
        <span style={{ width: `${share}%` }} />
      </div>
    </div>
  );
}

export function PluginOff() {
  return (
    <Card title="Campaigns are not available">
      <EmptyState title="The campaigns plugin is off on this service">
        The operator enables it in the service's plugin settings (<span class="mono">PLUGINS</span>); then campaigns appear here.
      </EmptyState>
    </Card>
  );
}
