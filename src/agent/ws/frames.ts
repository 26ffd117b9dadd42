/**
 * @module The frames of the WebSocket stream (spec 2 §WebSocket stream): client frames decoded and checked
 * with valibot, server frames typed, the closed sets of error codes, and the close codes with their JSON
 * reasons. All frames are JSON text with a `type` discriminator.
 */
import * as v from 'valibot';
import type { EventEnvelope } from '../../events/envelope.ts';
import type { ErrorCode } from '../../lib/errors.ts';
import type { SessionMessage } from '../sessions/messages.ts';
import type { ResolvedFilter } from './filter.ts';

/** Largest client frame accepted; a bigger one closes the connection with 1009 (README §WebSocket stream). */
export const MAX_CLIENT_FRAME_BYTES = 64 * 1024;

/** spec 2 §Limits: replay cap. */
export const REPLAY_CAP = 10_000;

export const SUBSCRIBE_ERROR_CODES = [
  'session_not_found',
  'cursor_expired',
  'replay_too_large',
  'invalid_filter',
] as const;
export type SubscribeErrorCode = (typeof SUBSCRIBE_ERROR_CODES)[number];

/** `error` frame codes: frame problems, plus the REST cancel's error codes for a refused `cancel`. */
export const FRAME_ERROR_CODES = [
  'invalid_frame',
  'unknown_frame_type',
  'subscribe_required',
  'already_subscribed',
] as const;
export type FrameErrorCode = (typeof FRAME_ERROR_CODES)[number] | ErrorCode;

/** Close codes the server uses. */
export const CLOSE = {
  /** A client frame above MAX_CLIENT_FRAME_BYTES (the WebSocket layer closes; stream-server.ts adds this reason). */
  tooLarge: { code: 1009, reason: 'frame_too_large' },
  /** A text frame that is not UTF-8 (RFC 6455 §8.1: the WebSocket layer closes; stream-server.ts adds this reason). */
  invalidText: { code: 1007, reason: 'invalid_utf8' },
  /** A frame that breaks the protocol (reserved opcode or bits, unmasked, a bad close code; likewise). */
  protocolError: { code: 1002, reason: 'protocol_error' },
  /** DELETE /sessions/{id}: the session ended; nothing more will come. */
  sessionEnded: { code: 1000, reason: 'session_ended' },
  /** spec 2 item 6: shutdown. */
  shuttingDown: { code: 1001, reason: 'service_shutting_down' },
  /** spec 2 §Errors: the outbound queue overflowed. */
  tooSlow: { code: 1008, reason: 'client_too_slow' },
  /** Three pings went unanswered. */
  heartbeat: { code: 4000, reason: 'heartbeat_timeout' },
} as const;
export type CloseKind = keyof typeof CLOSE;

const EVENT_ID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const SubscribeSchema = v.object({
  type: v.literal('subscribe'),
  // its shape is checked by filter.ts: a bad filter is the subscribe_error invalid_filter, not a frame error;
  // none (absent or null, as `since: null` is no cursor) is every type
  filter: v.optional(
    v.pipe(
      v.unknown(),
      v.transform((f) => f ?? 'preset:full'),
    ),
    'preset:full',
  ),
  since: v.optional(
    v.nullable(v.pipe(v.string('must be an event id or null'), v.regex(EVENT_ID_RE, 'must be an event id'))),
    null,
  ),
  snapshot: v.optional(v.boolean('must be a boolean'), false),
});

const CancelSchema = v.object({
  type: v.literal('cancel'),
  turn_id: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty')),
  reason: v.optional(
    v.nullable(v.pipe(v.string('must be a string'), v.maxLength(1000, 'is longer than 1000 characters'))),
  ),
});

const NonceSchema = v.pipe(v.string('must be a string'), v.maxLength(200, 'is longer than 200 characters'));
const PingSchema = v.object({ type: v.literal('ping'), nonce: NonceSchema });
const PongSchema = v.object({ type: v.literal('pong'), nonce: NonceSchema });

const SCHEMAS = {
  subscribe: SubscribeSchema,
  cancel: CancelSchema,
  ping: PingSchema,
  pong: PongSchema,
} as const;

export type SubscribeFrame = v.InferOutput<typeof SubscribeSchema>;
export type CancelFrame = v.InferOutput<typeof CancelSchema>;
export type ClientFrame =
  | SubscribeFrame
  | CancelFrame
  | v.InferOutput<typeof PingSchema>
  | v.InferOutput<typeof PongSchema>;

export interface FrameError {
  code: FrameErrorCode;
  message: string;
}

/** A client text frame, or the error frame to answer it with. */
export function decodeClientFrame(text: string): { frame: ClientFrame } | { error: FrameError } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { error: { code: 'invalid_frame', message: 'frames are JSON text; this one is not JSON' } };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return { error: { code: 'invalid_frame', message: 'a frame is a JSON object with a "type"' } };
  const type = (json as { type?: unknown }).type;
  if (typeof type !== 'string' || !Object.hasOwn(SCHEMAS, type)) {
    const named = typeof type === 'string' ? `"${type.slice(0, 100)}"` : 'missing';
    return {
      error: {
        code: 'unknown_frame_type',
        message: `frame type ${named} is not one of ${Object.keys(SCHEMAS).join(', ')}`,
      },
    };
  }
  const parsed = v.safeParse(SCHEMAS[type as keyof typeof SCHEMAS], json);
  if (parsed.success) return { frame: parsed.output as ClientFrame };
  const issue = parsed.issues[0];
  const path = issue.path?.map((p) => String(p.key)).join('.') ?? '';
  // a missing key is valibot's object issue ("Invalid key: …"), not the field's own message
  const message =
    issue.kind === 'schema' && issue.type === 'object' && issue.input === undefined
      ? 'is required'
      : issue.message;
  return { error: { code: 'invalid_frame', message: `${type}${path ? `.${path}` : ''}: ${message}` } };
}

/** The session fields of a snapshot frame. */
export interface SnapshotSession {
  id: string;
  workspace_path: string;
  active_model: string;
  routing_policy_version: string;
  cost_so_far_usd: number;
  turn_count: number;
  current_turn_id: string | null;
  current_turn_status: 'in_flight' | null;
}

export type ServerFrame =
  | {
      type: 'subscribe_ack';
      resolved_filter: ResolvedFilter;
      since: string | null;
      snapshot: boolean;
      replay_event_count: number;
    }
  | { type: 'subscribe_error'; code: SubscribeErrorCode; message: string }
  | {
      type: 'snapshot';
      session: SnapshotSession;
      messages: SessionMessage[];
      snapshot_at_event_id: string | null;
    }
  | { type: 'event'; event: EventEnvelope }
  | { type: 'ping' | 'pong'; nonce: string }
  | { type: 'error'; code: FrameErrorCode; message: string };

/** A frame as the bytes of one text message. */
export function encodeFrame(frame: ServerFrame): Buffer {
  return Buffer.from(JSON.stringify(frame), 'utf8');
}

/** The JSON close reason `{code, message}` (≤ 123 bytes, the WebSocket limit). */
export function closeReason(kind: CloseKind, message: string): string {
  const reason = JSON.stringify({ code: CLOSE[kind].reason, message });
  return Buffer.byteLength(reason) <= 123 ? reason : JSON.stringify({ code: CLOSE[kind].reason });
}
