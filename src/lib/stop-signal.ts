/**
 * @module The stop signals of every long-running command (gateway, serve, forward): the first SIGTERM or
 * SIGINT starts a graceful stop; during it, a second one asks to hurry and a third ends the process.
 */

/** Resolves with the first SIGTERM or SIGINT and stops listening for both. */
export function waitForStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolve(signal);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
}

/**
 * While a graceful stop runs: the next SIGTERM or SIGINT (a second Ctrl-C) calls `hurry`, which cuts the
 * drain short but still lets the stop flush what it owes; one more ends the process at once (exit 128 +
 * signal number), for a stop that hangs. Without this, the second signal killed the process with
 * Node's default action and nothing was flushed. Returns the function that stops listening.
 */
export function onRepeatedStopSignal(hurry: (signal: NodeJS.Signals) => void): () => void {
  let received = 0;
  const on = (signal: NodeJS.Signals) => {
    received += 1;
    if (received === 1) hurry(signal);
    else process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
  };
  process.on('SIGTERM', on);
  process.on('SIGINT', on);
  return () => {
    process.off('SIGTERM', on);
    process.off('SIGINT', on);
  };
}
