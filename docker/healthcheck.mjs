// Container health check (spec 1 §Deployment contract): GET /healthz on the gateway's loopback port with
// node's own fetch, so the image needs neither curl nor wget. Exit 0 when it answers 2xx, else 1.
const port = process.env.SVC_GATEWAY_PORT || '8422';
const url = `http://127.0.0.1:${port}/healthz`;
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
