/**
 * @module The dashboard's tabs as HTML text built from the API's answers (no DOM, so node tests render
 * them). Every figure carries its raw API value in `data-value`; every string from the store is escaped.
 */
import type { ByKeyRow } from '../queries/by-key.ts';
import type { ByTeamRow } from '../queries/by-team.ts';
import type { CacheEffectivenessRow } from '../queries/cache-effectiveness.ts';
import type { CostRow } from '../queries/cost.ts';
import type { ReliabilityData } from '../queries/reliability.ts';
import type { RoutingData } from '../queries/routing.ts';
import type { SavingsData } from '../queries/savings.ts';
import type { SessionSummary } from '../queries/sessions.ts';
import type { TurnDrillDown } from '../queries/turn.ts';
import {
  concentrationCallouts,
  formatCalls,
  formatCount,
  formatPercent,
  formatShare,
  formatUsd,
  type IdentityShare,
  KIND_LABEL,
  savingsView,
} from './model.ts';

export interface CostTabData {
  total: CostRow;
  byModel: CostRow[];
  /** The savings answer, or why it was refused (a price table with no default baseline). */
  savings: SavingsData | { error: string };
  cache: CacheEffectivenessRow[];
}

export function renderCostTab(d: CostTabData): string {
  if (d.total.call_count === 0) return renderEmpty();
  const input = d.cache.reduce(
    (n, r) => n + r.uncached_input_tokens + r.cached_input_tokens + r.cache_creation_tokens,
    0,
  );
  const cached = d.cache.reduce((n, r) => n + r.cached_input_tokens, 0);
  return `<div class="tiles">
  ${tile('Spend', money(d.total.cost_usd, 'total-cost'))}
  ${tile('Calls', `<p class="figure">${count(d.total.call_count, 'total-calls')}</p>`)}
  ${savingsTile(d.savings)}
  ${tile('Cache hit rate', input === 0 ? '<p class="figure">–</p>' : `<p class="figure" data-field="cache-hit-rate" data-value="${cached / input}">${formatPercent(cached / input)}</p>`)}
</div>
<section><h2>Spend over time</h2><div class="chart"><canvas id="cost-chart" aria-label="Spend over time"></canvas></div></section>
<section><h2>By model</h2>${table(
    ['Model', 'Provider', 'Spend', 'Calls', 'Input tokens', 'Output tokens', 'Avg latency'],
    d.byModel.map((r) => [
      esc(String(r.model ?? '–')),
      esc(String(r.provider ?? '–')),
      money(r.cost_usd, 'model-cost'),
      count(r.call_count, 'model-calls'),
      count(r.input_tokens),
      count(r.output_tokens),
      r.avg_latency_ms === null ? '–' : `${formatCount(Math.round(r.avg_latency_ms))} ms`,
    ]),
  )}</section>`;
}

function savingsTile(savings: CostTabData['savings']): string {
  if ('error' in savings)
    return `<div class="tile"><h3>Savings</h3><p class="warning" data-field="savings-error">Unavailable: ${esc(savings.error)}</p></div>`;
  const s = savingsView(savings);
  return `<div class="tile${s.negative ? ' negative' : ''}"><h3>Savings vs <span class="id" data-field="savings-baseline">${esc(s.baseline)}</span></h3>
    <p class="figure" data-field="savings-usd" data-value="${savings.savings_usd}">${esc(s.amount)}</p>
    ${s.percent === null ? '' : `<p class="sub" data-field="savings-pct" data-value="${savings.savings_pct}">${esc(s.percent)} of the baseline</p>`}
    ${s.warning === null ? '' : `<p class="warning" data-field="savings-warning">⚠ ${esc(s.warning)}</p>`}
  </div>`;
}

export interface ActivityTabData {
  sessions: SessionSummary[];
  reliability: ReliabilityData;
  routing: RoutingData;
}

export function renderActivityTab(d: ActivityTabData): string {
  const sessions =
    d.sessions.length === 0
      ? '<p class="empty">No agent sessions yet: start <code>svc serve</code> and POST /sessions, or use a client of the agent server.</p>'
      : table(
          ['Session', 'Workspace', 'Model', 'Spend', 'Turns', 'Updated'],
          d.sessions.map((s) => [
            `<button class="link" data-session="${esc(s.id)}">${esc(s.id)}</button>`,
            esc(s.workspace_path),
            esc(s.active_model),
            money(s.cost_usd, 'session-cost'),
            count(s.turn_count),
            `<time datetime="${esc(s.updated_at)}">${esc(s.updated_at)}</time>`,
          ]),
        );
  return `<section><h2>Sessions</h2>${sessions}<div id="session-turns"></div></section>
<section><h2>Turn drill-down</h2>
  <form id="turn-form" class="inline"><label>Turn id <input name="turn" placeholder="a turn id, or a gateway call's svc-request-id" size="40"></label><button>Open</button></form>
  <div id="turn-detail"></div></section>
<section><h2>Routing</h2>
  <p>Hard failures (no model could be chosen): <strong data-field="hard-failures" data-value="${d.routing.hard_failures}">${formatCount(d.routing.hard_failures)}</strong></p>
  ${table(
    ['Policy slot', 'Wins'],
    d.routing.wins_by_policy.map((w) => [esc(w.policy), count(w.count, 'policy-wins')]),
  )}
  ${
    d.routing.rejections.length === 0
      ? ''
      : table(
          ['Rejected by', 'Because', 'Times'],
          d.routing.rejections.map((r) => [
            esc(String(r.policy)),
            esc(String(r.validation_failure)),
            count(r.count),
          ]),
        )
  }
</section>
<section><h2>Reliability</h2>
  ${
    d.reliability.latency_ms_by_model.length === 0
      ? '<p class="empty">No completed calls in this window.</p>'
      : table(
          ['Model', 'p50', 'p95', 'Calls'],
          d.reliability.latency_ms_by_model.map((l) => [
            esc(String(l.model)),
            `${formatCount(Math.round(l.p50))} ms`,
            `${formatCount(Math.round(l.p95))} ms`,
            count(l.sample_size),
          ]),
        )
  }
  ${
    d.reliability.errors_by_class.length === 0
      ? '<p>No failed calls in this window.</p>'
      : table(
          ['Model', 'Provider', 'Error class', 'Failures'],
          d.reliability.errors_by_class.map((e) => [
            esc(String(e.model)),
            esc(String(e.provider)),
            esc(String(e.error_class)),
            count(e.count, 'failures'),
          ]),
        )
  }
</section>`;
}

/** A session's turns, newest first, each opening the drill-down. */
export function renderSessionTurns(
  sessionId: string,
  turns: ReadonlyArray<{ turn_id: string; timestamp: string }>,
): string {
  if (turns.length === 0) return `<p class="empty">Session ${esc(sessionId)} has no turns yet.</p>`;
  return `<h3>Turns of ${esc(sessionId)}</h3><ul class="turns">${turns
    .map(
      (t) =>
        `<li><button class="link" data-turn="${esc(t.turn_id)}">${esc(t.turn_id)}</button> <time>${esc(t.timestamp)}</time></li>`,
    )
    .join('')}</ul>`;
}

export function renderTurn(t: TurnDrillDown): string {
  return `<div class="turn"><p><strong>${esc(t.turn_id)}</strong> ${t.session_id === null ? '(gateway call)' : `in ${esc(t.session_id)}`}
  <span class="badge${t.in_flight ? ' live' : ''}" data-field="in-flight">${t.in_flight ? 'in flight' : 'finished'}</span></p>
  ${table(
    ['Time', 'Event', 'Actor', 'Detail'],
    t.events.map((e) => [
      `<time>${esc(e.timestamp)}</time>`,
      esc(e.type),
      esc(e.actor),
      esc(summarise(e.payload)),
    ]),
  )}
  ${t.messages.length === 0 ? '' : `<h3>Messages</h3>${t.messages.map((m) => `<div class="message ${esc(m.role)}"><b>${esc(m.role)}</b> ${esc(messageText(m.content))}</div>`).join('')}`}
</div>`;
}

export interface IdentityTabData {
  total: number;
  teams: ByTeamRow[];
  users: CostRow[];
  keys: ByKeyRow[];
}

export function renderIdentityTab(d: IdentityTabData): string {
  if (d.total === 0 && d.keys.length === 0) return renderEmpty();
  const shares: IdentityShare[] = [
    ...d.teams.map((t) => ({
      kind: 'team' as const,
      id: t.team_id,
      cost_usd: t.cost_usd,
      call_count: t.call_count,
    })),
    ...d.users.map((u) => ({
      kind: 'user' as const,
      id: (u.user_id as string | null) ?? null,
      cost_usd: u.cost_usd,
      call_count: u.call_count,
    })),
    ...d.keys.map((k) => ({
      kind: 'key' as const,
      id: k.gateway_key_id,
      cost_usd: k.cost_usd,
      call_count: k.call_count,
    })),
  ];
  const callouts = concentrationCallouts(d.total, shares);
  const group = (kind: 'team' | 'user' | 'key', title: string, untagged: string) => {
    const list = shares.filter((s) => s.kind === kind);
    const callout = callouts.find((c) => c.kind === kind);
    const said =
      callout === undefined
        ? ''
        : `<div class="callout" data-field="callout" data-kind="${callout.kind}" data-value="${callout.share}">Top ${KIND_LABEL[callout.kind]} <strong>${esc(callout.id)}</strong> accounts for ${formatShare(callout.share)} of spend in this window.</div>`;
    return `<section><h2>${title}</h2>${said}<div class="tiles">${list
      .map(
        (
          s,
        ) => `<div class="tile identity" data-kind="${kind}" data-id="${esc(s.id ?? '')}"><h3>${esc(s.id ?? untagged)}</h3>
      ${money(s.cost_usd, `${kind}-cost`)}<p class="sub">${d.total > 0 ? formatShare(s.cost_usd / d.total) : '–'} of spend · ${formatCalls(s.call_count)}</p></div>`,
      )
      .join('')}</div></section>`;
  };
  return `${group('team', 'Teams', '(untagged)')}
${group('user', 'Developers', '(untagged)')}
${group('key', 'Gateway keys', '(agent server)')}`;
}

/** What to do when there is nothing to show yet. */
export function renderEmpty(): string {
  return `<div class="empty-state" data-field="empty">
  <h2>No model calls in this window</h2>
  <p>Spend shows up here once calls go through svc. Point an SDK at the gateway:</p>
  <pre>svc gateway issue-key --name my-laptop --workspace ~/code/app --user alice --team core   # prints a gw_… token once
svc gateway                                                                              # listens on 127.0.0.1:8422
ANTHROPIC_BASE_URL=http://127.0.0.1:8422 ANTHROPIC_API_KEY=gw_… your-app
OPENAI_BASE_URL=http://127.0.0.1:8422/v1 OPENAI_API_KEY=gw_… your-app</pre>
  <p>or run a turn on <code>svc serve</code>. Calls from all of them land in the same store; pick a wider window above if you expected some.</p>
</div>`;
}

// --- internal ---

/** Escapes text for HTML content and double-quoted attributes. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function tile(title: string, body: string): string {
  return `<div class="tile"><h3>${esc(title)}</h3>${body}</div>`;
}

function money(value: number, field?: string): string {
  return `<span class="figure${value < 0 ? ' negative' : ''}"${field ? ` data-field="${field}"` : ''} data-value="${value}">${esc(formatUsd(value))}</span>`;
}

function count(value: number, field?: string): string {
  return `<span${field ? ` data-field="${field}"` : ''} data-value="${value}">${formatCount(value)}</span>`;
}

function table(header: string[], rows: string[][]): string {
  return `<table><thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

function summarise(payload: unknown): string {
  if (payload === null || typeof payload !== 'object') return String(payload ?? '');
  const p = payload as Record<string, unknown>;
  const parts = ['model', 'chosen_model', 'cost_usd', 'tool_name', 'error_class', 'stop_reason', 'reason']
    .filter((k) => p[k] !== undefined && p[k] !== null)
    .map((k) => `${k}: ${String(p[k])}`);
  return parts.join(', ');
}

function messageText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  const text = content
    .map((b) =>
      b && typeof b === 'object' && (b as { type?: string }).type === 'text'
        ? String((b as { text?: unknown }).text ?? '')
        : `[${String((b as { type?: string })?.type ?? 'block')}]`,
    )
    .join(' ');
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}
