/**
 * Shared parts of the `svc analytics <report>` commands: the store, window and format flags, and the run
 * that opens the store directly (no server), calls the same query function as the HTTP endpoint, and
 * prints the endpoint's envelope as JSON (`--format json`) or a table for people.
 */
import { defineCommand } from 'citty';
import {
  envelope,
  exactMoneyText,
  type ParamNamer,
  parseWindow,
  type RawParams,
  stringifyAnswer,
  type TimeWindow,
} from '../../../analytics/index.ts';
import { readEnv } from '../../../config/env.ts';
import { DEFAULT_DB_PATH_HELP, resolveStoreTarget } from '../../../config/paths.ts';
import { SvcError } from '../../../lib/errors.ts';
import { systemClock } from '../../../lib/time.ts';
import { loadModelRegistry, type ModelRegistry } from '../../../models/registry.ts';
import { openStore, type Store } from '../../../store/open.ts';
import { runLongStatements } from '../../../store/statement-bounds.ts';
import { configFileFlagsOf } from '../../config-flags.ts';
import { databaseUrlArg, storeFlagsOf } from '../../store-flags.ts';

/** `--group-by` for `group_by`: how the report commands name a parameter in messages. */
export const flagName: ParamNamer = (name) => `--${name.replaceAll('_', '-')}`;

export const windowArgs = {
  from: {
    type: 'string',
    description: 'Window start, ISO 8601, UTC without a zone (inclusive; default 7 days before --to)',
  },
  to: { type: 'string', description: 'Window end, ISO 8601, UTC without a zone (exclusive; default now)' },
} as const;

const commonArgs = {
  format: { type: 'string', description: "table (default) or json (the HTTP endpoint's envelope)" },
  models: {
    type: 'string',
    description: 'models.yaml for the price table (default SVC_MODELS or the built-in table)',
  },
  'db-path': {
    type: 'string',
    description: `Trace store path (default SVC_DB_PATH or ${DEFAULT_DB_PATH_HELP})`,
  },
  ...databaseUrlArg,
} as const;

export interface ReportContext {
  store: Store;
  registry: ModelRegistry;
  /** The flags under their HTTP parameter names. */
  raw: RawParams;
  /** --from / --to resolved (the 7-day default); unused by the sessions list. */
  window: TimeWindow;
  nowUs: number;
}

/** A money field's exact decimal text (analytics/money.ts), shown and aligned as a number. */
export interface ExactNumber {
  readonly exact: string;
}
export type Cell = string | number | null | ExactNumber;
export interface Table {
  header: string[];
  rows: Cell[][];
}

export interface ReportSpec<T> {
  name: string;
  description: string;
  /** Extra flags, by their CLI names; each maps to the HTTP parameter of the same name with `_`. */
  args: Record<string, { type: 'string'; description: string }>;
  /** False for the sessions list (no window; works on PostgreSQL too). */
  windowed: boolean;
  /**
   * Refuses a bad report flag before the store is opened, so a typo is a usage error (exit 2) whether or
   * not the store exists; read() parses the same flags again.
   */
  check?(raw: RawParams, registry: ModelRegistry): void;
  read(ctx: ReportContext): Promise<T>;
  /** Header and rows of the table view. */
  table(data: T): Table;
  /** Lines printed under the table (a caveat the figures carry), none by default. */
  notes?(data: T): string[];
}

/** A citty command for one report. */
export function defineReport<T>(spec: ReportSpec<T>) {
  return defineCommand({
    meta: { name: spec.name, description: spec.description },
    args: { ...(spec.windowed ? windowArgs : {}), ...spec.args, ...commonArgs },
    // a flag given twice (`--user a --user b`) never gets here: svc main refuses it, as the endpoint
    // refuses user=a&user=b
    async run({ args }) {
      const format = (args as { format?: string }).format ?? 'table';
      if (format !== 'table' && format !== 'json')
        throw new SvcError('usage_error', { message: `--format must be table or json, not "${format}".` });
      const raw = toRawParams(args as Record<string, unknown>);
      const env = readEnv();
      const registry = loadModelRegistry(
        configFileFlagsOf(args as { models?: string }).modelsPath ?? env.models,
      );
      const nowUs = systemClock.nowUs();
      const window = parseWindow(raw, nowUs, flagName);
      spec.check?.(raw, registry);
      // read-only: no chmod, no migration, no WAL change; works for a user who may only read the store
      const store = await openStore(resolveStoreTarget(env, storeFlagsOf(args)), {
        readOnly: true,
        currentSchema: true,
      });
      try {
        // a report may take minutes on a large PostgreSQL store (statement-bounds.ts)
        const data = await runLongStatements(() => spec.read({ store, registry, raw, window, nowUs }));
        const answer = envelope(spec.windowed ? window : null, registry.pricingVersion, data);
        process.stdout.write(
          format === 'json' ? `${stringifyAnswer(answer, 2)}\n` : renderReport(answer, spec),
        );
      } finally {
        await store.close();
      }
    },
  });
}

/** A table of flat objects: their keys (of the first) as the header, in order. */
export function objectsTable<T extends object>(rows: readonly T[]): Table {
  if (rows.length === 0) return { header: [], rows: [] };
  const keys = Object.keys(rows[0]);
  return {
    header: keys.map((k) => k.toUpperCase()),
    rows: rows.map((r) => keys.map((k) => fieldCell(r, k))),
  };
}

/** `row[key]` as a cell: a money field as its exact text, so the table shows what the JSON answers. */
export function fieldCell(row: object, key: string): Cell {
  const exact = exactMoneyText(row, key);
  return exact === undefined ? toCell((row as Record<string, unknown>)[key]) : { exact };
}

export function toCell(value: unknown): Cell {
  return value === null || value === undefined ? null : typeof value === 'number' ? value : String(value);
}

// --- internal ---

/** `--group-by x` → `group_by: 'x'`; booleans of citty arrive as strings here (all flags are strings). */
function toRawParams(args: Record<string, unknown>): RawParams {
  const raw: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(args)) {
    if (typeof value === 'string' && key !== '_') raw[key.replaceAll('-', '_')] = value;
  }
  return raw;
}

function renderReport<T>(answer: ReturnType<typeof envelope<T>>, spec: ReportSpec<T>): string {
  const { header, rows } = spec.table(answer.data);
  const w = answer.window;
  const title =
    w.start === null
      ? `pricing ${answer.current_pricing_version}`
      : `window ${w.start} .. ${w.end} (UTC, end excluded)  pricing ${answer.current_pricing_version}`;
  // the sessions list has no window: "in this window" would send the reader looking for one
  if (rows.length === 0) return `${title}\n${spec.windowed ? 'no data in this window' : 'none yet'}\n`;
  const cells = [header, ...rows.map((r) => r.map(cell))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const numeric = header.map((_, i) => rows.every((r) => r[i] === null || typeof r[i] !== 'string'));
  const lines = cells.map((r) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd(),
  );
  const notes = spec.notes?.(answer.data) ?? [];
  return `${title}\n${[...lines, ...notes].join('\n')}\n`;
}

function cell(value: Cell): string {
  if (value === null) return '-';
  if (typeof value === 'object') return value.exact;
  // String(5e-7) is '5e-7': a person reads amounts under a millionth as decimals too
  return typeof value === 'number' ? PLAIN_NUMBER.format(value) : value;
}

/** The shortest decimal of a number, never in exponent form, without digit grouping. */
const PLAIN_NUMBER = new Intl.NumberFormat('en-US', { useGrouping: false, maximumFractionDigits: 20 });
