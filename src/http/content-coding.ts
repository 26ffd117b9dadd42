/**
 * @module Request bodies arrive uncompressed: `identity` (or no Content-Encoding) is the only coding either
 * server takes; anything else is 415 unsupported_media_type, never compressed bytes read as text.
 */
import { SvcError } from '../lib/errors.ts';

/** `identity` (or no header) is the only coding taken; anything else is 415 unsupported_media_type. */
export function assertNoContentCoding(header: string | null): void {
  if (header === null) return;
  const codings = header
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return;
  throw new SvcError('unsupported_media_type', {
    message: `Content-Encoding ${codings.join(', ')} is not supported; send the request body uncompressed.`,
    details: { param: 'content-encoding' },
  });
}
