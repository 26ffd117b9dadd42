// Container health check (spec 1 §Deployment contract): GET /healthz of the gateway (or /health of `svc serve`)
// on its loopback port with node's own fetch, so the image needs neither curl nor wget. Exit 0 on 2xx, else 1.
// What runs is read from the container's main process (PID 1: node, or docker-init with the entrypoint and its
// arguments; SVC_HEALTHCHECK_PID names another): `serve` is the agent server, anything else the gateway.
// Its --port / --host win over SVC_GATEWAY_PORT / SVC_GATEWAY_HOST (SVC_SERVE_* for serve), as in svc itself.
// The address is the one svc binds for that host (src/http/listen.ts resolveLoopbackHost): ::1 and 127.x.y.z
// are kept, anything else (unset, localhost, a non-loopback name) binds 127.0.0.1.
import { readFileSync } from 'node:fs';

const { command, flags } = mainCommand(process.env.SVC_HEALTHCHECK_PID || '1');
const serve = command === 'serve';
const env = serve
  ? { port: process.env.SVC_SERVE_PORT, host: process.env.SVC_SERVE_HOST }
  : { port: process.env.SVC_GATEWAY_PORT, host: process.env.SVC_GATEWAY_HOST };
const port = flags.port || env.port || (serve ? '8421' : '8422');
const url = `http://${boundHost(flags.host ?? env.host)}:${port}/${serve ? 'health' : 'healthz'}`;
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(4000) });
  if (!res.ok) {
    process.stderr.write(`healthcheck: ${url} answered ${res.status}\n`);
    process.exit(1);
  }
  process.exit(0);
} catch (err) {
  process.stderr.write(`healthcheck: ${url} unreachable (${err?.cause?.code ?? err?.name ?? 'error'})\n`);
  process.exit(1);
}

function boundHost(requested) {
  const bare = (requested ?? '').trim().replace(/^\[|\]$/g, '');
  if (bare === '::1') return '[::1]';
  if (/^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(bare)) return bare;
  return '127.0.0.1';
}

/** The svc command of process `pid` and its --port / --host; the gateway when it cannot be read. */
function mainCommand(pid) {
  let argv;
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return { command: 'gateway', flags: {} };
  }
  const at = argv.findIndex(
    (a) => a.endsWith('svc-entrypoint') || a.endsWith('entrypoint.sh') || a.endsWith('/bin/svc'),
  );
  if (at < 0) return { command: 'gateway', flags: {} };
  let rest = argv.slice(at + 1);
  const command = rest[0] === undefined || rest[0].startsWith('-') ? 'gateway' : rest[0];
  if (command === rest[0]) rest = rest.slice(1);
  const flags = {};
  for (let i = 0; i < rest.length; i++) {
    const m = /^--(port|host)(?:=(.*))?$/.exec(rest[i]);
    if (m) flags[m[1]] = m[2] ?? rest[++i];
  }
  return { command, flags };
}
