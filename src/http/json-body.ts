/**
 * @module JSON request bodies of service-owned endpoints (spec 2 §What the service does, item 4): a body
 * must be `application/json`, uncompressed, and parse, else 415 `unsupported_media_type`; endpoints whose body is
 * optional accept an empty one as `{}`.
 */
import type { Context } from 'hono';
import { SvcError } from '../lib/errors.ts';
import { assertNoContentCoding } from './content-coding.ts';
import { BodyNotUtf8, type NodeBindings, readBodyText } from './incoming.ts';

/** Largest body a service endpoint reads (a turn may carry base64 images). */
export const MAX_SERVICE_BODY_BYTES = 32 * 1024 * 1024;

export interface JsonBodyOptions {
  /** An empty body (no bytes) reads as `{}` instead of 415. */
  optional?: boolean;
  limit?: number;
}

/** The parsed body; throws 415 unsupported_media_type for a non-JSON type or text that does not parse. */
export async function readJsonBody(c: Context, options: JsonBodyOptions = {}): Promise<unknown> {
  const env = c.env as NodeBindings | undefined;
  const limit = options.limit ?? MAX_SERVICE_BODY_BYTES;
  // compressed bytes are not JSON text: refused, not read as text (the gateway refuses them alike)
  assertNoContentCoding(c.req.header('content-encoding') ?? null);
  const text = await readBodyText(c.req.raw, limit, env).catch((err: unknown) => {
    if (err instanceof SvcError && err.code === 'request_too_large')
      throw new SvcError('request_too_large', {
        message: `The request body is larger than this endpoint's limit of ${limit} bytes.`,
        details: { limit_bytes: limit },
      });
    if (err instanceof BodyNotUtf8)
      throw new SvcError('unsupported_media_type', {
        message: 'The request body is not valid JSON: it is not UTF-8 text.',
      });
    throw err;
  });
  if (options.optional && text.trim() === '' && !hasJsonType(c.req.header('content-type'))) return {};
  if (!hasJsonType(c.req.header('content-type'))) {
    throw new SvcError('unsupported_media_type', {
      message: 'This endpoint takes a JSON body; send it with Content-Type: application/json.',
    });
  }
  if (options.optional && text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new SvcError('unsupported_media_type', {
      message: 'The request body is not valid JSON.',
    });
  }
}

/** `application/json`, with or without parameters such as `charset=utf-8`. */
export function hasJsonType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  return contentType.split(';')[0].trim().toLowerCase() === 'application/json';
}
