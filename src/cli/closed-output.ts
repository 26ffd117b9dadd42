/**
 * @module A server's log lines are not worth its life: once the reader of its stdout or stderr is gone
 * (`svc serve | head`, a log shipper restarting), each write fails with EPIPE; those lines are dropped
 * instead of an unhandled 'error' event that kills the process and every request and turn it is running.
 */

/** Called once by the long-running commands (serve, gateway) before they start logging. */
export function dropLogsOnClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
}
