/**
 * `svc backup` and `svc gateway backup` share one command definition; the gateway form also honours
 * SVC_GATEWAY_DB_PATH (DECISIONS §2). main.ts resolves subcommands from argv[2..], so the first word
 * tells which form ran.
 */
export function invokedUnderGateway(argv: readonly string[] = process.argv): boolean {
  return argv[2] === 'gateway';
}
