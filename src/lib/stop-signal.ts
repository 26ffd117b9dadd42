/**
 * @module The stop signal of every long-running command (gateway, serve, forward): resolves with the first
 * SIGTERM or SIGINT and stops listening for both.
 */

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
