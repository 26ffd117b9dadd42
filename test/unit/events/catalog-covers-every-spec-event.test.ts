/**
 * Guards the closed event catalog against the spec: every event type the three documents (and
 * DECISIONS.md) name is in EVENT_CATALOG, and the streaming-only ones are never persisted.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { EVENT_CATALOG, EVENT_TYPES, isEventType, isPersisted } from '#src/events/catalog.ts';
import { ROOT } from '../../helpers/svc.ts';

const SPEC = join(ROOT, '..', 'shared', 'spec');
const DOCS = [
  '1-gateway-metrics-versioning.md',
  '2-agent-server.md',
  '3-analytics-user-data.md',
  'DECISIONS.md',
];
// The spec folder sits beside the repository on development machines, not in every CI checkout.
const specAvailable = existsSync(join(SPEC, 'DECISIONS.md'));
const skip = !specAvailable && 'spec folder not beside the repository';

/** Dotted names in backticks that are not events (file names, JSON paths, object types). */
const NOT_EVENTS = new Set([
  'chat.completion',
  'details.tried',
  'error.code',
  'monitoring.enabled',
  'models.yaml',
  'routing.yaml',
  'usage.cost_usd',
]);

const text = () => DOCS.map((d) => readFileSync(join(SPEC, d), 'utf8')).join('\n');

/** Backticked `subject.action` names, plus unquoted ones whose subject the catalog already uses. */
function specEventNames(): Set<string> {
  const all = text();
  const names = new Set<string>();
  for (const m of all.matchAll(/`([a-z]+\.[a-z]+(?:_[a-z]+)*)`/g)) names.add(m[1]);
  const subjects = new Set(EVENT_TYPES.map((t) => t.split('.')[0]));
  for (const m of all.matchAll(/(?<![\w./-])([a-z]+)\.([a-z]+(?:_[a-z]+)*)(?![\w(/-])/g)) {
    if (subjects.has(m[1])) names.add(`${m[1]}.${m[2]}`);
  }
  for (const n of NOT_EVENTS) names.delete(n);
  return names;
}

function listAfter(marker: RegExp): string[] {
  const line = text()
    .split('\n')
    .find((l) => marker.test(l));
  assert.ok(line, `no line matching ${marker}`);
  return [...line.matchAll(/`([a-z]+\.[a-z_]+)`/g)].map((m) => m[1]);
}

test('every event type named in the spec documents is in the catalog', { skip }, () => {
  const names = specEventNames();
  assert.ok(names.size >= 35, `only ${names.size} event names parsed from the spec`);
  const missing = [...names].filter((n) => !isEventType(n)).sort();
  assert.deepEqual(missing, [], `missing from EVENT_CATALOG: ${missing.join(', ')}`);
});

test('every catalog event type is named in the spec documents', { skip }, () => {
  const names = specEventNames();
  const extra = EVENT_TYPES.filter((t) => !names.has(t));
  assert.deepEqual(extra, [], `catalog types the spec never names: ${extra.join(', ')}`);
});

test('streaming-only events are never persisted; the listed bus events are', { skip }, () => {
  const streaming = listAfter(/Streaming-only events/);
  const bus = listAfter(/^\d+\. Bus events/);
  assert.ok(streaming.length >= 7 && bus.length >= 15);
  for (const t of streaming) assert.equal(isEventType(t) && isPersisted(t), false, t);
  for (const t of bus) assert.equal(isEventType(t) && isPersisted(t), true, t);
});

test('catalog entries are well formed: dotted snake_case names and a known sensitivity', () => {
  for (const [type, entry] of Object.entries(EVENT_CATALOG)) {
    assert.match(type, /^[a-z]+\.[a-z]+(_[a-z]+)*$/, type);
    assert.ok(['public', 'pseudonymous', 'private'].includes(entry.sensitivity), type);
    assert.equal(typeof entry.persisted, 'boolean', type);
  }
  assert.equal(isEventType('toString'), false);
  assert.equal(isEventType('text.delta'), true);
});

test('bus events whose payload carries model- or user-written text are private (tool input, a delegated task, its result)', () => {
  for (const type of [
    'tool.called',
    'tool.confirmation_requested',
    'tool.completed',
    'tool.failed',
    'delegate.started',
    'delegate.completed',
  ] as const) {
    assert.equal(EVENT_CATALOG[type].sensitivity, 'private', type);
  }
});
