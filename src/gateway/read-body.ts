/**
 * @module The request body as text, refused with 413 `request_too_large` past the limit
 * (`SVC_GATEWAY_MAX_BODY_BYTES`, default 32 MiB, DECISIONS §4) without buffering more than the limit.
 */
import { SvcError } from '../lib/errors.ts';

export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

export async function readBodyText(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) throw tooLarge(limit);
  const body = request.body;
  if (!body) return '';
  if (Number.isFinite(declared)) {
    // a declared length within the limit: the HTTP parser stops at it, so one read of the whole body is safe
    return request.text();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function tooLarge(limit: number): SvcError {
  return new SvcError('request_too_large', {
    message: `The request body is larger than the gateway's limit of ${limit} bytes (SVC_GATEWAY_MAX_BODY_BYTES).`,
    details: { limit_bytes: limit },
  });
}
