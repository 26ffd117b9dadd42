/**
 * @module The dashboard in the browser (bundled by tsup into dist/dashboard/app.js with Chart.js): the
 * window picker in the browser's time zone, tab switching, the /analytics calls (UTC bounds), and the
 * rendering of render.ts into the page. Everything it shows comes from those answers.
 */
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';
import type { AnalyticsEnvelope } from '../../envelope.ts';
import { costSeries } from '../charts.ts';
import {
  bucketFor,
  formatUsd,
  formatUsdTick,
  resolvePreset,
  type UtcWindow,
  type WindowPreset,
} from '../model.ts';
import {
  renderActivityTab,
  renderCostTab,
  renderIdentityTab,
  renderSessionTurns,
  renderTurn,
} from '../render.ts';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

type Tab = 'cost' | 'activity' | 'identity';
const state: { tab: Tab; preset: WindowPreset; window: UtcWindow } = {
  tab: 'cost',
  preset: '7d',
  window: resolvePreset('7d', new Date()),
};
let chart: Chart | undefined;
let generation = 0;

const content = document.getElementById('content') as HTMLElement;

async function api<T>(path: string, params: Record<string, string> = {}): Promise<T> {
  const query = new URLSearchParams(params).toString();
  return ((await getJson(`/analytics/${path}${query ? `?${query}` : ''}`)) as AnalyticsEnvelope<T>).data;
}

/**
 * A GET of the server's JSON. Its failures are one sentence a person can act on: the error message of a
 * JSON error body, else the status (a proxy's HTML page), else that the server did not answer.
 */
async function getJson(url: string): Promise<any> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch {
    throw new Error('svc serve did not answer; is it running? Reload the page once it is.');
  }
  const body = await res.json().catch(() => undefined);
  if (res.ok && body !== undefined) return body;
  throw new Error(
    body?.error?.message ??
      `svc serve answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}.`,
  );
}

async function load(): Promise<void> {
  const mine = ++generation;
  // a preset ends now: a tab opened later asks up to this moment, not up to when the window was picked
  if (state.preset !== 'custom') state.window = resolvePreset(state.preset, new Date());
  const w = { from: state.window.from, to: state.window.to };
  showRange();
  // figures of another tab or window must not stand under this one's name while its answers come
  chart?.destroy();
  chart = undefined;
  content.innerHTML = '<p class="empty">Loading…</p>';
  try {
    const html = await renderTab(state.tab, w);
    if (mine !== generation) return; // a newer window or tab won
    content.innerHTML = html;
    if (state.tab === 'cost') await drawCostChart(w, mine);
  } catch (err) {
    if (mine === generation)
      content.innerHTML = `<p class="error">Could not load: ${escapeText(String((err as Error).message))}</p>`;
  }
}

async function renderTab(tab: Tab, w: UtcWindow): Promise<string> {
  if (tab === 'cost') {
    const [total, byModel, savings, cache] = await Promise.all([
      api<any>('cost', { ...w, group_by: 'none' }),
      api<any>('cost', { ...w, group_by: 'model' }),
      // savings alone may be refused (no default baseline in the price table): the rest still shows
      api<any>('savings', w).catch((err: unknown) => ({ error: (err as Error).message })),
      api<any>('cache_effectiveness', w),
    ]);
    return renderCostTab({ total, byModel, savings, cache });
  }
  if (tab === 'activity') {
    const [sessions, reliability, routing] = await Promise.all([
      api<any>('sessions', { order: 'recency', limit: '25' }),
      api<any>('reliability', w),
      api<any>('routing', w),
    ]);
    return renderActivityTab({ sessions, reliability, routing });
  }
  const [total, teams, users, keys] = await Promise.all([
    api<any>('cost', { ...w, group_by: 'none' }),
    api<any>('by_team', w),
    api<any>('cost', { ...w, group_by: 'user' }),
    api<any>('by_key', w),
  ]);
  return renderIdentityTab({ total: total.cost_usd, teams, users, keys });
}

async function drawCostChart(w: UtcWindow, mine: number): Promise<void> {
  const canvas = document.getElementById('cost-chart') as HTMLCanvasElement | null;
  if (!canvas) return;
  const bucket = bucketFor(w);
  let rows: any[];
  try {
    rows = await api<any[]>('cost', { ...w, group_by: bucket });
  } catch (err) {
    // the figures above came; only the chart's place says what went wrong
    if (mine === generation)
      (canvas.parentElement as HTMLElement).innerHTML =
        `<p class="error">${escapeText(String((err as Error).message))}</p>`;
    return;
  }
  if (mine !== generation) return;
  const s = costSeries(rows, bucket, w);
  chart = new Chart(canvas, {
    type: 'bar',
    data: {
      labels: s.labels,
      datasets: [{ label: 'Spend (USD)', data: s.values, backgroundColor: '#2f6fed' }],
    },
    options: {
      maintainAspectRatio: false,
      animation: false,
      scales: {
        x: { title: { display: true, text: s.unit } },
        y: { beginAtZero: true, ticks: { callback: (v) => formatUsdTick(Number(v)) } },
      },
      plugins: { tooltip: { callbacks: { label: (c) => formatUsd(Number(c.parsed.y)) } } },
    },
  });
}

function showRange(): void {
  const fmt = (iso: string) => new Date(iso).toLocaleString();
  (document.getElementById('range') as HTMLElement).textContent =
    `${fmt(state.window.from)} → ${fmt(state.window.to)} (your time zone; sent as UTC)`;
}

function escapeText(text: string): string {
  const div = document.createElement('div');
  div.textContent = text;
  return div.innerHTML;
}

type TurnStart = { turn_id: string; timestamp: string };

/** The session's 20 newest turns, newest first: the events come oldest first, so every page is read. */
async function openSession(sessionId: string): Promise<void> {
  const target = document.getElementById('session-turns') as HTMLElement;
  let newest: TurnStart[] = [];
  let cursor: string | null = null;
  try {
    do {
      const after: string = cursor ? `&after=${encodeURIComponent(cursor)}` : '';
      const body: { events?: TurnStart[]; next_cursor?: unknown } = await getJson(
        `/sessions/${encodeURIComponent(sessionId)}/events?types=turn.started&limit=1000${after}`,
      );
      newest = [...newest, ...(body.events ?? [])].slice(-20);
      cursor = typeof body.next_cursor === 'string' ? body.next_cursor : null;
    } while (cursor);
  } catch (err) {
    target.innerHTML = `<p class="error">${escapeText((err as Error).message)}</p>`;
    return;
  }
  target.innerHTML = renderSessionTurns(sessionId, newest.reverse());
}

async function openTurn(turnId: string): Promise<void> {
  const target = document.getElementById('turn-detail') as HTMLElement;
  try {
    target.innerHTML = renderTurn(await api<any>(`turns/${encodeURIComponent(turnId)}`));
  } catch (err) {
    target.innerHTML = `<p class="error">${escapeText((err as Error).message)}</p>`;
  }
  target.scrollIntoView({ block: 'nearest' });
}

document.addEventListener('click', (e) => {
  const el = (e.target as HTMLElement).closest('button');
  if (!el) return;
  if (el.dataset.tab) {
    state.tab = el.dataset.tab as Tab;
    for (const b of document.querySelectorAll<HTMLButtonElement>('nav button'))
      b.setAttribute('aria-selected', String(b === el));
    void load();
  } else if (el.dataset.preset) {
    state.preset = el.dataset.preset as WindowPreset;
    for (const b of document.querySelectorAll<HTMLButtonElement>('.windows button[data-preset]'))
      b.setAttribute('aria-pressed', String(b === el));
    const custom = document.getElementById('custom') as HTMLFormElement;
    custom.classList.toggle('open', state.preset === 'custom');
    if (state.preset !== 'custom') {
      state.window = resolvePreset(state.preset, new Date());
      void load();
    }
  } else if (el.dataset.session) {
    void openSession(el.dataset.session);
  } else if (el.dataset.turn) {
    void openTurn(el.dataset.turn);
  }
});

document.addEventListener('submit', (e) => {
  e.preventDefault();
  const form = e.target as HTMLFormElement;
  const data = new FormData(form);
  if (form.id === 'custom') {
    try {
      state.window = resolvePreset('custom', new Date(), {
        from: String(data.get('from')),
        to: String(data.get('to')),
      });
    } catch (err) {
      generation++; // an answer still on its way must not replace the message
      content.innerHTML = `<p class="error">${escapeText((err as Error).message)}</p>`;
      return;
    }
    void load();
  } else if (form.id === 'turn-form') {
    const turn = String(data.get('turn') ?? '').trim();
    if (turn) void openTurn(turn);
  }
});

void load();
