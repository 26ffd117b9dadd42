/**
 * helm/svc without helm (not installable here): values.yaml holds every default of spec 1 §Cluster chart
 * defaults, templates reference only keys that exist in values.yaml, and every manifest is valid YAML once
 * the template actions are removed (simple `.Values` lookups are filled in from values.yaml, so ports and
 * thresholds can be checked too).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { load, loadAll } from 'js-yaml';
import { ROOT } from '../helpers/svc.ts';

const CHART = join(ROOT, 'helm/svc');
const TEMPLATES = join(CHART, 'templates');
type Values = Record<string, any>;
const values = load(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Values;
const templateFiles = readdirSync(TEMPLATES).sort();
const manifestFiles = templateFiles.filter((f) => f.endsWith('.yaml'));
const read = (file: string) => readFileSync(join(TEMPLATES, file), 'utf8');

/** A values path such as `monitoring.alerts.enabled`, or undefined when a key on the way is missing. */
function lookup(path: string): { found: boolean; value?: unknown } {
  let node: unknown = values;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return { found: false };
    node = (node as Record<string, unknown>)[key];
  }
  return { found: true, value: node };
}

/** Drops lines that hold only template actions, fills `{{ .Values.x }}` / `{{ .Values.x | quote }}`, and
 * replaces any other inline action with a placeholder; raw strings {{`…`}} keep their text. */
function stripActions(text: string): string {
  const out: string[] = [];
  const noComments = text.replace(/\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}/g, '');
  for (const line of noComments.split('\n')) {
    const raw = line.replace(/\{\{`([\s\S]*?)`\}\}/g, (_m, s: string) =>
      s.replaceAll('{{', '«').replaceAll('}}', '»'),
    );
    if (/^\s*(\{\{[^}]*\}\}\s*)+$/.test(raw)) continue;
    const filled = raw.replace(/\{\{-?\s*([^}]*?)\s*-?\}\}/g, (_m, action: string) => {
      const m = /^\.Values\.([\w.]+)(\s*\|\s*quote)?$/.exec(action);
      if (!m) return 'x';
      const { found, value } = lookup(m[1]);
      assert.ok(found, `.Values.${m[1]} exists`);
      return m[2] ? JSON.stringify(String(value)) : String(value);
    });
    out.push(filled.replaceAll('«', '{{').replaceAll('»', '}}'));
  }
  return out.join('\n');
}

function manifests(file: string): Array<Record<string, any>> {
  return (loadAll(stripActions(read(file))) as Array<Record<string, any> | null>).filter(
    (d): d is Record<string, any> => d !== null,
  );
}

const one = (file: string) => {
  const docs = manifests(file);
  assert.equal(docs.length, 1, file);
  return docs[0];
};

test('values.yaml holds every default of the cluster chart table', () => {
  assert.equal(values.replicaCount, 1);
  assert.deepEqual(values.persistence.accessModes, ['ReadWriteOnce']);
  assert.equal(values.persistence.size, '1Gi');
  assert.equal(values.persistence.enabled, true);
  assert.deepEqual(values.resources.requests, { cpu: '250m', memory: '256Mi' });
  assert.deepEqual(values.strategy.rollingUpdate, { maxSurge: 1, maxUnavailable: 0 });
  assert.equal(values.service.type, 'ClusterIP');
  assert.equal(values.service.port, 8422);
  assert.equal(values.gateway.port, 8422);
  assert.equal(values.forward.port, 8423);
  assert.equal(values.ingress.enabled, false);
  assert.equal(values.ingress.tls.secretName, '', 'the TLS certificate is the operator’s');
  assert.deepEqual(
    [values.providers.existingSecret, values.providers.anthropicApiKey, values.providers.openaiApiKey],
    ['', '', ''],
    'no provider key by default: the install fails until one is given',
  );
  assert.deepEqual(values.keystore, { existingSecret: '', existingConfigMap: '' });
  assert.deepEqual(values.database, {
    url: '',
    existingSecret: '',
    existingSecretKey: 'SVC_DATABASE_URL',
    port: 5432,
  });
  assert.deepEqual(values.autoscaling, {
    enabled: false,
    minReplicas: 1,
    maxReplicas: 3,
    targetCPUUtilizationPercentage: 80,
  });
  assert.deepEqual(values.podDisruptionBudget, { enabled: true, minAvailable: 1 });
  assert.equal(values.networkPolicy.enabled, true);
  assert.equal(values.networkPolicy.egressHttpsPort, 443);
  assert.equal(values.monitoring.enabled, false);
  assert.equal(values.monitoring.interval, '30s');
  assert.equal(values.monitoring.scrapeTimeout, '10s');
  const alerts = values.monitoring.alerts;
  assert.equal(alerts.enabled, false);
  assert.deepEqual(
    [alerts.llmLatencyP99, alerts.llmErrorRate, alerts.authFailures, alerts.keyCost],
    [
      { seconds: 30, for: '5m' },
      { ratio: 0.05, for: '10m' },
      { perSecond: 0.1, for: '5m' },
      { usdPerHour: 10, for: '10m' },
    ],
  );
  assert.deepEqual(
    {
      runAsNonRoot: values.securityContext.runAsNonRoot,
      runAsUser: values.securityContext.runAsUser,
      runAsGroup: values.securityContext.runAsGroup,
      readOnlyRootFilesystem: values.securityContext.readOnlyRootFilesystem,
      allowPrivilegeEscalation: values.securityContext.allowPrivilegeEscalation,
    },
    {
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    },
  );
  assert.equal(values.podSecurityContext.fsGroup, 1000);
});

test('templates reference only keys that exist in values.yaml', () => {
  const missing: string[] = [];
  for (const file of templateFiles) {
    for (const m of read(file).matchAll(/\.Values((?:\.\w+)+)/g)) {
      if (!lookup(m[1].slice(1)).found) missing.push(`${file}: .Values${m[1]}`);
    }
  }
  assert.deepEqual(missing, []);
});

test('every manifest template is valid YAML with apiVersion, kind and a name once actions are removed', () => {
  const kinds: string[] = [];
  for (const file of manifestFiles) {
    for (const doc of manifests(file)) {
      assert.equal(typeof doc.apiVersion, 'string', file);
      assert.equal(typeof doc.kind, 'string', file);
      assert.ok(doc.metadata?.name, `${file} names its object`);
      kinds.push(doc.kind);
    }
  }
  assert.deepEqual(kinds.sort(), [
    'ConfigMap',
    'ConfigMap',
    'Deployment',
    'HorizontalPodAutoscaler',
    'Ingress',
    'NetworkPolicy',
    'PersistentVolumeClaim',
    'PodDisruptionBudget',
    'PrometheusRule',
    'Secret',
    'Secret',
    'Service',
    'ServiceAccount',
    'ServiceMonitor',
  ]);
  const chart = load(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as Values;
  assert.equal(chart.apiVersion, 'v2');
  assert.equal(chart.appVersion, JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
});

test('the Deployment: gateway on loopback behind the forward sidecar, probes through 8423, hardened and read-only', () => {
  const text = read('deployment.yaml');
  const d = one('deployment.yaml');
  assert.equal(d.spec.replicas, 1);
  assert.deepEqual(d.spec.strategy, {
    type: 'RollingUpdate',
    rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
  });
  assert.match(
    text,
    /if not \.Values\.autoscaling\.enabled \}\}\n.*\n\s+replicas:/,
    'replicas only without the HPA',
  );
  const [gateway, forward] = d.spec.template.spec.containers;
  assert.equal(gateway.name, 'gateway');
  assert.equal(forward.name, 'forward');
  assert.equal(gateway.args, undefined, 'the entrypoint starts the gateway');
  assert.deepEqual(forward.args.slice(0, 5), [
    'forward',
    '--listen',
    '0.0.0.0:8423',
    '--target',
    '127.0.0.1:8422',
  ]);
  assert.deepEqual(forward.ports, [{ name: 'forward', containerPort: 8423, protocol: 'TCP' }]);

  const env = Object.fromEntries(
    (gateway.env as Array<{ name: string; value?: string }>).map((e) => [e.name, e]),
  );
  assert.equal(env.SVC_GATEWAY_HOST.value, '127.0.0.1');
  assert.equal(env.SVC_GATEWAY_PORT.value, '8422');
  assert.equal(env.SVC_GATEWAY_KEYSTORE.value, '/etc/svc/keys.json');
  assert.equal(env.SVC_GATEWAY_DB_PATH.value, '/var/lib/svc/svc.db');
  const names = gateway.env.map((e: { name: string }) => e.name);
  assert.ok(names.indexOf('POD_IP') < names.indexOf('SVC_ALLOWED_HOSTS'), '$(POD_IP) is defined before use');
  assert.match(text, /include "svc\.providerSecretName" \$/);
  assert.match(text, /range \$var := list "ANTHROPIC_API_KEY" "OPENAI_API_KEY" "OPENROUTER_API_KEY"/);
  const provider = gateway.env.find(
    (e: { name: string; valueFrom?: unknown }) =>
      e.name !== 'SVC_DATABASE_URL' && e.valueFrom && 'secretKeyRef' in (e.valueFrom as object),
  );
  assert.equal(provider.valueFrom.secretKeyRef.optional, true);

  for (const probe of [gateway.readinessProbe, gateway.livenessProbe]) {
    assert.deepEqual(probe.httpGet, { path: '/healthz', port: 8423 });
  }
  assert.equal(
    (text.match(/toYaml \.Values\.securityContext \| nindent 12/g) ?? []).length,
    2,
    'both containers',
  );
  assert.match(text, /toYaml \.Values\.podSecurityContext \| nindent 8/);
  const mounts = Object.fromEntries(gateway.volumeMounts.map((m: { name: string }) => [m.name, m]));
  assert.deepEqual(mounts.workspace, { name: 'workspace', mountPath: '/workspace', readOnly: true });
  assert.deepEqual(mounts.keystore, { name: 'keystore', mountPath: '/etc/svc', readOnly: true });
  assert.equal(mounts.traces.mountPath, '/var/lib/svc');
  assert.equal(mounts.tmp.mountPath, '/tmp', 'a writable /tmp with a read-only root filesystem');
  const volumes = Object.fromEntries(d.spec.template.spec.volumes.map((v: { name: string }) => [v.name, v]));
  assert.ok(volumes.keystore.secret && volumes.keystore.configMap, 'an existing Secret, else a ConfigMap');
  assert.equal(volumes.workspace.persistentVolumeClaim.readOnly, true);
  assert.ok(!/subPath/.test(text), 'a folder mount, so Secret updates reach the running gateway');
});

test('the Service targets the sidecar; the HPA, PDB and PVC carry the table defaults', () => {
  const s = one('service.yaml');
  assert.equal(s.spec.type, 'ClusterIP');
  assert.deepEqual(s.spec.ports, [{ name: 'http', port: 8422, targetPort: 'forward', protocol: 'TCP' }]);
  const hpa = one('hpa.yaml');
  assert.deepEqual([hpa.spec.minReplicas, hpa.spec.maxReplicas], [1, 3]);
  assert.equal(hpa.spec.metrics[0].resource.name, 'cpu');
  assert.match(read('hpa.yaml'), /^\{\{- if \.Values\.autoscaling\.enabled \}\}/);
  assert.equal(one('pdb.yaml').spec.minAvailable, 1);
  const pvc = one('pvc.yaml');
  assert.equal(pvc.spec.resources.requests.storage, '1Gi');
  assert.match(read('pvc.yaml'), /toYaml \.Values\.persistence\.accessModes/);
});

test('install fails without a provider key; the ingress needs the operator’s TLS secret; the seeded keystore is empty', () => {
  const helpers = read('_helpers.tpl');
  const providerHelper = helpers.slice(helpers.indexOf('define "svc.providerSecretName"'));
  assert.match(
    providerHelper.slice(0, providerHelper.indexOf('{{- end }}\n{{- end }}')),
    /\{\{- fail "svc: no provider key/,
  );
  assert.match(read('ingress.yaml'), /required "ingress\.tls\.secretName is required/);
  assert.match(read('ingress.yaml'), /^\{\{- if \.Values\.ingress\.enabled \}\}/);
  const ingress = one('ingress.yaml');
  assert.equal(ingress.spec.rules[0].http.paths[0].backend.service.port.name, 'http');
  const seed = one('keystore-seed.yaml');
  assert.deepEqual(JSON.parse(seed.data['keys.json']), { keys: [] });
  const secret = one('provider-secret.yaml');
  assert.deepEqual(Object.keys(secret.stringData).sort(), [
    'ANTHROPIC_API_KEY',
    'OPENAI_API_KEY',
    'OPENROUTER_API_KEY',
  ]);
});

test('SVC_ALLOWED_HOSTS names the Service (every in-cluster form), the ingress host when enabled, and the pod IP', () => {
  const helpers = read('_helpers.tpl');
  const def = helpers.slice(helpers.indexOf('define "svc.allowedHosts"'));
  assert.match(def, /list \$name \(printf "%s\.%s" \$name \$ns\) \(printf "%s\.%s\.svc" \$name \$ns\)/);
  assert.match(def, /\.Values\.clusterDomain/);
  assert.match(
    def,
    /if \.Values\.ingress\.enabled \}\}\n\{\{- \$hosts = append \$hosts \.Values\.ingress\.host/,
  );
  assert.match(def, /\$\(POD_IP\)/);
  assert.match(
    read('deployment.yaml'),
    /name: SVC_ALLOWED_HOSTS\n\s+value: \{\{ include "svc\.allowedHosts" \. \| quote \}\}/,
  );
});

test('the NetworkPolicy denies by default: ingress from the namespace to 8423, egress TCP 443 and cluster DNS', () => {
  const np = one('networkpolicy.yaml');
  assert.deepEqual(np.spec.policyTypes, ['Ingress', 'Egress']);
  assert.equal(np.spec.ingress.length, 1);
  assert.deepEqual(np.spec.ingress[0].from, [{ podSelector: {} }]);
  assert.deepEqual(np.spec.ingress[0].ports, [{ protocol: 'TCP', port: 8423 }]);
  const [https, dns] = np.spec.egress;
  assert.deepEqual(https, { ports: [{ protocol: 'TCP', port: 443 }] });
  assert.deepEqual(dns.ports, [
    { protocol: 'UDP', port: 53 },
    { protocol: 'TCP', port: 53 },
  ]);
  assert.ok(dns.to[0].namespaceSelector && dns.to[0].podSelector);
  assert.deepEqual(values.networkPolicy.dns.podLabels, { 'k8s-app': 'kube-dns' });
});

test('the ServiceMonitor scrapes the Service port every 30s (timeout 10s) only when monitoring.enabled', () => {
  assert.match(read('servicemonitor.yaml'), /^\{\{- if \.Values\.monitoring\.enabled \}\}/);
  const sm = one('servicemonitor.yaml');
  assert.deepEqual(sm.spec.endpoints, [
    { port: 'http', path: '/metrics', interval: '30s', scrapeTimeout: '10s' },
  ]);
});

test('the four alert rules are off by default and match src/metrics/alert-rules.yaml at the default thresholds', () => {
  assert.match(read('prometheusrule.yaml'), /^\{\{- if \.Values\.monitoring\.alerts\.enabled \}\}/);
  const chartRules = one('prometheusrule.yaml').spec.groups[0].rules as Array<Record<string, any>>;
  const source = load(readFileSync(join(ROOT, 'src/metrics/alert-rules.yaml'), 'utf8')) as {
    groups: Array<{ rules: Array<Record<string, any>> }>;
  };
  const shipped = source.groups.flatMap((g) => g.rules);
  assert.equal(chartRules.length, 4);
  assert.deepEqual(
    chartRules.map((r) => ({
      alert: r.alert,
      expr: r.expr,
      for: r.for,
      description: r.annotations.description,
    })),
    shipped.map((r) => ({
      alert: r.alert,
      expr: r.expr,
      for: r.for,
      description: r.annotations.description,
    })),
  );
  for (const r of chartRules) assert.equal(r.labels.severity, 'warning');
});

test('NOTES.txt warns about the seeded keystore and the Pending extra replicas', () => {
  const notes = read('NOTES.txt');
  assert.match(notes, /if include "svc\.seededKeystore" \. \}\}\n\nWARNING: .*EMPTY keystore/);
  assert.match(notes, /never become ready/);
  assert.match(notes, /ReadWriteOnce.*Pending/);
});

test('database.url switches to PostgreSQL: SVC_DATABASE_URL from a Secret, no trace volume or keystore, egress to the database', () => {
  const helpers = read('_helpers.tpl');
  assert.match(
    helpers,
    /define "svc\.database" -\}\}\n\{\{- if or \.Values\.database\.url \.Values\.database\.existingSecret \}\}true/,
  );
  assert.match(helpers, /define "svc\.seededKeystore"[\s\S]*\(include "svc\.database" \.\)\) \}\}true/);
  const text = read('deployment.yaml');
  assert.match(
    text,
    /if include "svc\.database" \. \}\}\n.*\n\s+- name: SVC_DATABASE_URL\n\s+valueFrom:\n\s+secretKeyRef:\n\s+name: \{\{ include "svc\.databaseSecretName" \. \}\}/,
  );
  assert.match(
    text,
    /\{\{- else \}\}\n\s+- name: SVC_GATEWAY_KEYSTORE[\s\S]*?SVC_GATEWAY_DB_PATH[\s\S]*?\{\{- end \}\}/,
  );
  const mountsAndVolumes =
    text.match(/\{\{- if not \(include "svc\.database" \.\) \}\}\n\s+- name: keystore/g) ?? [];
  assert.equal(mountsAndVolumes.length, 2, 'neither the keystore nor the trace volume with PostgreSQL');
  assert.match(text, /checksum\/database:/);
  assert.match(read('pvc.yaml'), /^\{\{- if and .*\(not \(include "svc\.database" \.\)\) \}\}/);
  assert.match(
    read('database-secret.yaml'),
    /^\{\{- if and \.Values\.database\.url \(not \.Values\.database\.existingSecret\) \}\}/,
  );
  assert.deepEqual(Object.keys(one('database-secret.yaml').stringData), ['SVC_DATABASE_URL']);
  const np = one('networkpolicy.yaml');
  assert.deepEqual(np.spec.egress[2], { ports: [{ protocol: 'TCP', port: 5432 }] });
  assert.match(read('networkpolicy.yaml'), /if include "svc\.database" \. \}\}\n\s+# PostgreSQL/);
  const notes = read('NOTES.txt');
  assert.match(notes, /if include "svc\.database" \. \}\}\n\nThe store is PostgreSQL/);
  assert.match(notes, /issue-key --name first/);
});

test('config.routingPolicy / config.models: a ConfigMap mounted at /etc/svc-config, SVC_ROUTING_POLICY and SVC_MODELS, a rolling checksum', () => {
  assert.deepEqual(values.config, { routingPolicy: '', models: '' }, 'the built-in defaults unless given');
  assert.deepEqual([values.gateway.extraVolumes, values.gateway.extraVolumeMounts], [[], []]);
  const text = read('config.yaml');
  assert.match(text, /^\{\{- if include "svc\.config" \. \}\}/, 'only when a text is given');
  assert.match(
    read('_helpers.tpl'),
    /define "svc\.config"[\s\S]*or \.Values\.config\.routingPolicy \.Values\.config\.models/,
  );
  const map = one('config.yaml');
  assert.equal(map.kind, 'ConfigMap');
  assert.deepEqual(Object.keys(map.data).sort(), ['models.yaml', 'routing.yaml']);
  assert.match(
    text,
    /with \.Values\.config\.routingPolicy \}\}\n\s+routing\.yaml: \|\n\s+\{\{- \. \| nindent 4 \}\}/,
  );
  assert.match(
    text,
    /with \.Values\.config\.models \}\}\n\s+models\.yaml: \|\n\s+\{\{- \. \| nindent 4 \}\}/,
  );

  const deployment = read('deployment.yaml');
  const d = one('deployment.yaml');
  const gateway = d.spec.template.spec.containers[0];
  const env = Object.fromEntries(gateway.env.map((e: { name: string; value?: string }) => [e.name, e.value]));
  assert.equal(env.SVC_ROUTING_POLICY, '/etc/svc-config/routing.yaml');
  assert.equal(env.SVC_MODELS, '/etc/svc-config/models.yaml');
  assert.match(deployment, /if \.Values\.config\.routingPolicy \}\}\n\s+- name: SVC_ROUTING_POLICY/);
  assert.match(deployment, /if \.Values\.config\.models \}\}\n\s+- name: SVC_MODELS/);
  const mount = gateway.volumeMounts.find((m: { name: string }) => m.name === 'config');
  assert.deepEqual(mount, { name: 'config', mountPath: '/etc/svc-config', readOnly: true });
  const volume = d.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'config');
  assert.ok(volume.configMap, 'the chart’s ConfigMap');
  assert.match(deployment, /name: \{\{ include "svc\.fullname" \. \}\}-config/);
  assert.match(
    deployment,
    /checksum\/config: \{\{ include \(print \$\.Template\.BasePath "\/config\.yaml"\) \. \| sha256sum \}\}/,
  );
  assert.match(
    deployment,
    /with \.Values\.gateway\.extraVolumeMounts \}\}\n\s+\{\{- toYaml \. \| nindent 12 \}\}/,
  );
  assert.match(deployment, /with \.Values\.gateway\.extraVolumes \}\}\n\s+\{\{- toYaml \. \| nindent 8 \}\}/);
});

test('the routing policy’s last valid copy ($XDG_CONFIG_HOME/svc) goes to a writable mount: the trace volume, else /tmp', () => {
  // HOME is on the read-only root filesystem: under it every start with a routing policy logged 'cannot save
  // the last known good routing policy', and a refused routing.yaml had no earlier copy to fall back on
  assert.equal(values.securityContext.readOnlyRootFilesystem, true);
  const text = read('deployment.yaml');
  assert.match(
    text,
    /if include "svc\.database" \. \}\}\n[\s\S]*?- name: XDG_CONFIG_HOME\n\s+value: \/tmp\n\s+\{\{- else \}\}/,
    'PostgreSQL (no trace volume): the /tmp emptyDir',
  );
  assert.match(
    text,
    /\{\{- else \}\}\n\s+- name: SVC_GATEWAY_KEYSTORE[\s\S]*?- name: XDG_CONFIG_HOME\n\s+value: \/var\/lib\/svc\n\s+\{\{- end \}\}/,
    'SQLite: the trace volume, kept across pods',
  );
  const gateway = one('deployment.yaml').spec.template.spec.containers[0];
  const writable = new Set(
    gateway.volumeMounts
      .filter((m: { readOnly?: boolean }) => m.readOnly !== true)
      .map((m: { mountPath: string }) => m.mountPath),
  );
  for (const e of gateway.env.filter((v: { name: string }) => v.name === 'XDG_CONFIG_HOME'))
    assert.ok(writable.has(e.value), `${e.value} is a writable mount`);
});

test('the README’s helm commands run as pasted: every --set names a values key, no -f of a file nobody made', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /### Kubernetes \(helm\/svc\)[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const helm = block.split('\n').filter((line) => /^helm /.test(line));
  assert.ok(helm.length >= 3, 'lint, template and install');
  for (const line of helm) {
    assert.doesNotMatch(line, /\s(-f|--values)[\s=]/, `${line}: a values file the walkthrough never writes`);
    for (const m of line.matchAll(/--set(?:-file)? ([\w.]+)=/g))
      assert.ok(lookup(m[1]).found, `${line}: ${m[1]} is a values.yaml key`);
  }
  const template = helm.find((line) => line.startsWith('helm template'));
  assert.match(
    template ?? '',
    /providers\.(existingSecret|anthropicApiKey)=/,
    'renders: install fails with no key',
  );
});
