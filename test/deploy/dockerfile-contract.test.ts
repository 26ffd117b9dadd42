/**
 * docker/Dockerfile cannot be built here: it is linted with dockerfile-utils and checked against the
 * container contract of spec 1 §Deployment contract; compose.yaml and entrypoint.sh are checked statically.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { validate } from 'dockerfile-utils';
import { load } from 'js-yaml';
import { ROOT } from '../helpers/svc.ts';

const DOCKERFILE = readFileSync(join(ROOT, 'docker/Dockerfile'), 'utf8');

interface Instruction {
  keyword: string;
  args: string;
}

/** Instructions with continuation lines joined and comments dropped, split into stages at FROM. */
function stages(text: string): Instruction[][] {
  const joined = text
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const out: Instruction[][] = [[]];
  for (const line of joined.split('\n')) {
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const ins = { keyword: m[1].toUpperCase(), args: m[2].replace(/\s+/g, ' ').trim() };
    if (ins.keyword === 'FROM') out.push([]);
    out[out.length - 1].push(ins);
  }
  return out;
}

const [preamble, ...built] = stages(DOCKERFILE);
const runtime = built[built.length - 1];
const all = (keyword: string, stage: Instruction[] = runtime) =>
  stage.filter((i) => i.keyword === keyword).map((i) => i.args);

test('the Dockerfile passes the dockerfile-utils linter with no diagnostics', () => {
  const diagnostics = validate(DOCKERFILE);
  assert.deepEqual(
    diagnostics.map((d) => `${d.range.start.line + 1}: ${d.message}`),
    [],
  );
  // The linter is live: a broken copy of the same file is reported.
  const broken = DOCKERFILE.replace('EXPOSE 8422', 'EXPOSE 84x22').replace('USER 1000:1000', 'USER');
  assert.equal(validate(broken).length, 2);
});

test('multi-stage on an official Node 24 slim base: the build stage runs npm ci and the bundle', () => {
  const base = /^NODE_IMAGE=(\S+)$/.exec(all('ARG', preamble)[0] ?? '');
  assert.ok(base, 'the base image is one ARG default');
  assert.match(base[1], /^node:24(\.\d+)*-[a-z]+-slim$/);
  assert.ok(built.length >= 2, 'at least a build and a runtime stage');
  for (const stage of built) assert.match(stage[0].args, /^\$\{NODE_IMAGE\}( AS \w+)?$/);
  const build = built.find((s) => / AS build$/.test(s[0].args));
  assert.ok(build);
  const runs = all('RUN', build).join('\n');
  assert.match(runs, /npm ci/);
  assert.match(runs, /tsup/);
});

test('the runtime stage holds only svc: bundle, production modules, bin, entrypoint and health check', () => {
  const copies = all('COPY');
  const fromBuild = copies.filter((c) => c.includes('--from=')).map((c) => c.split(' ').slice(-2).join(' '));
  assert.deepEqual(fromBuild.sort(), ['/app/node_modules ./node_modules', '/src/dist ./dist']);
  assert.ok(
    !all('RUN').some((r) => /apt-get|apk|npm (ci|install|i )/.test(r)),
    'nothing installed at run time',
  );
  assert.ok(
    all('RUN').some((r) => /rm -rf \/usr\/local\/lib\/node_modules/.test(r)),
    'npm is removed',
  );
  // Every context file copied into any stage is admitted by docker/Dockerfile.dockerignore and exists.
  const ignore = readFileSync(join(ROOT, 'docker/Dockerfile.dockerignore'), 'utf8');
  const admitted = ignore
    .split('\n')
    .filter((l) => l.startsWith('!'))
    .map((l) => l.slice(1).replace(/\/\*\*$/, ''));
  for (const stage of built) {
    for (const c of all('COPY', stage).filter((a) => !a.includes('--from='))) {
      const sources = c
        .split(' ')
        .filter((w) => !w.startsWith('--'))
        .slice(0, -1);
      for (const src of sources) {
        assert.ok(existsSync(join(ROOT, src)), `${src} exists`);
        assert.ok(admitted.includes(src.replace(/\/$/, '')), `${src} is admitted by the .dockerignore`);
      }
    }
  }
});

test('the runtime contract: uid/gid 1000, env paths, three volumes, port 8422, /healthz check without curl or wget', () => {
  const users = all('USER');
  assert.deepEqual(users, ['1000:1000']);
  const userAt = runtime.findIndex((i) => i.keyword === 'USER');
  assert.ok(
    runtime.slice(userAt).every((i) => i.keyword !== 'RUN'),
    'nothing runs as root after USER',
  );
  const env = all('ENV').join(' ');
  assert.match(env, /\bSVC_GATEWAY_KEYSTORE=\/etc\/svc\/keys\.json\b/);
  assert.match(env, /\bSVC_GATEWAY_DB_PATH=\/var\/lib\/svc\/svc\.db\b/);
  const volumes = JSON.parse(all('VOLUME')[0]) as string[];
  assert.deepEqual(volumes.sort(), ['/etc/svc', '/var/lib/svc', '/workspace']);
  assert.deepEqual(all('EXPOSE'), ['8422']);
  const [health] = all('HEALTHCHECK');
  const cmd = JSON.parse(health.slice(health.indexOf('CMD ') + 4)) as string[];
  assert.deepEqual(cmd, ['node', '/app/healthcheck.mjs']);
  assert.ok(!/\b(curl|wget)\b/.test(DOCKERFILE.replace(/#.*$/gm, '')), 'neither curl nor wget is used');
  const script = readFileSync(join(ROOT, 'docker/healthcheck.mjs'), 'utf8');
  // the address it asks is checked by running it (docker-entrypoint-dispatch.test.ts)
  assert.match(script, /'healthz'/);
  assert.match(script, /'127\.0\.0\.1'/);
  assert.ok(copiesTo('/app/healthcheck.mjs'));
  assert.deepEqual(JSON.parse(all('ENTRYPOINT')[0]), ['/usr/local/bin/svc-entrypoint']);
  assert.ok(copiesTo('/usr/local/bin/svc-entrypoint'));
});

test('the entrypoint is POSIX sh that exec-s svc on every branch (shellcheck when installed)', (t) => {
  const path = join(ROOT, 'docker/entrypoint.sh');
  const text = readFileSync(path, 'utf8');
  assert.match(text, /^#!\/bin\/sh\n/);
  const invocations = text.split('\n').filter((l) => /"\$svc"/.test(l) && !l.trim().startsWith('#'));
  assert.ok(invocations.length >= 4);
  for (const l of invocations) assert.match(l.trim(), /^exec "\$svc"/);
  let shellcheck = true;
  try {
    execFileSync('shellcheck', ['--version'], { stdio: 'ignore' });
  } catch {
    shellcheck = false;
  }
  if (!shellcheck) {
    t.skip('shellcheck is not installed (apt-get install shellcheck)');
    return;
  }
  execFileSync('shellcheck', ['-s', 'sh', path], { stdio: 'pipe' });
});

test('compose.yaml: host networking, the three volumes (workspace read-only), a drain-sized stop grace period', () => {
  const doc = load(readFileSync(join(ROOT, 'docker/compose.yaml'), 'utf8')) as {
    services: Record<string, Record<string, unknown>>;
    volumes: Record<string, unknown>;
  };
  const gw = doc.services.gateway;
  assert.equal(gw.network_mode, 'host');
  assert.equal((gw.build as { dockerfile: string }).dockerfile, 'docker/Dockerfile');
  const mounts = (gw.volumes as string[]).map((v) => v.split(':'));
  assert.deepEqual(
    mounts
      .map((m) =>
        m
          .slice(-2)
          .join(':')
          .replace(/^[^/]*:/, ''),
      )
      .sort(),
    ['/etc/svc', '/var/lib/svc', '/workspace:ro'].sort(),
  );
  for (const m of mounts.filter((x) => !x[0].startsWith('$') && !x[0].startsWith('.'))) {
    assert.ok(m[0] in doc.volumes, `${m[0]} is declared`);
  }
  assert.ok(Number.parseInt(String(gw.stop_grace_period), 10) > 30);
  const env = gw.environment as Record<string, string>;
  for (const k of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY']) assert.ok(k in env);
});

test('compose.postgres.yaml: two host-networked gateways on their own ports sharing one PostgreSQL', () => {
  const doc = load(readFileSync(join(ROOT, 'docker/compose.postgres.yaml'), 'utf8')) as {
    services: Record<string, Record<string, any>>;
    volumes: Record<string, unknown>;
  };
  const gateways = Object.entries(doc.services).filter(([name]) => name.startsWith('gateway-'));
  assert.equal(gateways.length, 2);
  const ports = new Set<string>();
  for (const [name, gw] of gateways) {
    assert.equal(gw.network_mode, 'host', name);
    assert.equal(gw.build.dockerfile, 'docker/Dockerfile', name);
    assert.deepEqual(gw.depends_on, { postgres: { condition: 'service_healthy' } }, name);
    assert.ok(Number.parseInt(String(gw.stop_grace_period), 10) > 30, name);
    assert.deepEqual(
      gw.volumes.map((v: string) => v.split(':').slice(-2).join(':')),
      ['/workspace:ro'],
      `${name}: no keystore or trace volume, both live in the database`,
    );
    // the password goes in PGPASSWORD, not the URL, where '/', '@', '#' or '%' of a generated one break it
    assert.equal(gw.environment.SVC_DATABASE_URL, 'postgres://svc@127.0.0.1:5432/svc', name);
    assert.match(gw.environment.PGPASSWORD, /^\$\{SVC_PG_PASSWORD:\?[^}]*\}$/, name);
    for (const k of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'])
      assert.ok(k in gw.environment);
    ports.add(gw.environment.SVC_GATEWAY_PORT);
  }
  assert.equal(ports.size, 2, 'each replica on its own host port');
  const pg = doc.services.postgres;
  assert.match(pg.image, /^postgres:\d+/);
  assert.deepEqual(pg.ports, ['127.0.0.1:5432:5432'], 'published on the host loopback only');
  assert.ok(pg.healthcheck.test.join(' ').includes('pg_isready'));
  assert.ok('svc-postgres' in doc.volumes);
});

test('the pg_dump examples redirect a binary dump, so their docker compose exec allocates no TTY (-T)', () => {
  // `docker compose exec` allocates a pseudo-TTY by default, which rewrites the custom-format dump's bytes
  // (LF to CRLF) on its way to the file: pg_restore then refuses the archive
  const examples = ['README.md', 'docker/compose.postgres.yaml'].flatMap((file) =>
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .filter((line) => /docker compose .*\bexec\b.*\bpg_dump\b.*>/.test(line))
      .map((line) => ({ file, line })),
  );
  assert.ok(examples.length >= 2, 'the README and the compose file each show one');
  for (const { file, line } of examples) assert.match(line, /\bexec -T\b/, `${file}: ${line.trim()}`);
});

// --- internal ---

function copiesTo(dest: string): boolean {
  return all('COPY').some((c) => c.endsWith(` ${dest}`));
}
