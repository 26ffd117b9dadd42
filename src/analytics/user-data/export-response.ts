/**
 * @module The HTTP door of the per-user export (spec 3 §export): runUserExport streamed as a JSON-lines
 * response body with one chunk in flight at a time (the reader's demand paces the store reads, so memory
 * is constant), and the audit event only after the body drained: under Node once the response finished
 * (every byte handed to the socket), elsewhere once the reader took the last chunk. A reader that leaves
 * early cancels the export and no audit event is written.
 */
import type { NodeBindings } from '../../http/incoming.ts';
import { SvcError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { countUserEvents, runUserExport, type UserExportDeps, type UserExportRequest } from './export.ts';

export interface ExportResponseDeps extends UserExportDeps {
  log: Logger;
}

/**
 * 200 with the streamed body; `X-Svc-Row-Count` is the count at request arrival. `headersOnly` (a HEAD
 * request) answers the same headers and runs no export: nothing is read, sent or audited.
 */
export async function createExportResponse(
  deps: ExportResponseDeps,
  request: UserExportRequest,
  node?: NodeBindings,
  options: { headersOnly?: boolean } = {},
): Promise<Response> {
  const rowCount = await countUserEvents(deps.store, request);
  const headers = {
    'content-type': 'application/jsonl',
    'content-disposition': `attachment; filename=${request.userId}.jsonl`,
    'x-svc-row-count': String(rowCount),
  };
  // Hono answers HEAD with the GET route and drops its body unread: an export started here would audit
  // an empty one nobody received, or wait forever for a reader that never comes
  if (options.headersOnly) return new Response(null, { status: 200, headers });
  const pipe = createDemandPipe();
  const finished = node?.outgoing ? responseFinished(node.outgoing) : undefined;
  finished?.catch(() => undefined); // handled where awaited; a client that left early must not crash us
  const drained = async () => {
    pipe.close();
    await finished;
  };
  runUserExport(deps, request, pipe.write, { drained }).catch((err: unknown) => {
    // under Node the connection is cut (the client sees a transfer cut short, never a complete export),
    // which cancels the body; an errored body instead reached @hono/node-server, which printed its stack
    if (node?.outgoing) node.outgoing.destroy();
    else pipe.fail(err);
    // no user id in the log: forget could not reach it there
    if (!isGone(err)) deps.log.error('user export failed mid-stream', { error: err });
  });
  return new Response(pipe.stream, { status: 200, headers });
}

// --- internal ---

interface DemandPipe {
  stream: ReadableStream<Uint8Array>;
  /** Enqueues one chunk and resolves once the reader took it; rejects once the reader left. */
  write(chunk: string): Promise<void>;
  close(): void;
  fail(err: unknown): void;
}

function createDemandPipe(): DemandPipe {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let wake: (() => void) | undefined;
  let gone: SvcError | undefined;
  let waiting: { resolve: () => void; reject: (err: unknown) => void } | undefined;
  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      pull() {
        wake?.();
      },
      cancel() {
        gone = clientGone();
        waiting?.reject(gone);
      },
    },
    { highWaterMark: 1 },
  );
  return {
    stream,
    async write(chunk) {
      if (gone) throw gone;
      controller.enqueue(encoder.encode(chunk));
      if ((controller.desiredSize ?? 0) > 0) return;
      // wait for the reader to take it (its next pull); a cancel rejects instead
      await new Promise<void>((resolve, reject) => {
        waiting = { resolve, reject };
        wake = () => {
          wake = undefined;
          waiting = undefined;
          resolve();
        };
      });
    },
    close() {
      if (gone) throw gone;
      controller.close();
    },
    fail(err) {
      if (gone) return;
      try {
        controller.error(err);
      } catch {
        // already closed
      }
    },
  };
}

/** Resolves on 'finish' (all written); rejects when the socket closed first. */
function responseFinished(outgoing: NonNullable<NodeBindings['outgoing']>): Promise<void> {
  return new Promise((resolve, reject) => {
    if (outgoing.writableFinished) return resolve();
    outgoing.once('finish', () => resolve());
    outgoing.once('close', () => {
      if (!outgoing.writableFinished) reject(clientGone());
    });
  });
}

function clientGone(): SvcError {
  return new SvcError('cancelled', {
    message: 'the client closed the connection before the export was fully read',
  });
}

function isGone(err: unknown): boolean {
  return err instanceof SvcError && err.code === 'cancelled';
}
