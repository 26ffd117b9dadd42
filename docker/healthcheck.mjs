// Container health check (spec 1 §Deployment contract): GET /healthz on the gateway's loopback port with
// node's own fetch, so the image needs neither curl nor wget. Exit 0 when it answers 2xx, else 1.
// The address is the one `svc gateway` binds for SVC_GATEWAY_HOST (src/http/listen.ts resolveLoopbackHost):
// ::1 and 127.x.y.z are kept, anything else (unset, localhost, a non-loopback name) binds 127.0.0.1.
const port = process.env.SVC_GATEWAY_PORT || '8422';
const url = `http://${boundHost(process.env.SVC_GATEWAY_HOST)}:${port}/healthz`;
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
