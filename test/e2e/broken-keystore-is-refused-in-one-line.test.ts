/**
 * A keystore that is not valid JSON is refused in one sentence on one line (DECISIONS §2), by the key
 * commands and by `svc gateway` at start: the reason names the JSON error, never an excerpt of the file
 * (V8's JSON.parse message quotes the text around the error, newlines included).
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gatewayFiles } from '../helpers/gateway-keys.ts';
import { freePort, makeTempDir, runSvc } from '../helpers/svc.ts';

const tmp = makeTempDir();
test.after(() => tmp.cleanup());

test('a keystore broken across lines is refused with one line that quotes none of it', async () => {
  const files = gatewayFiles(tmp.dir);
  // a hand-edited keystore with a stray word on its own line, between two records' worth of text
  const text = '{\n  "keys": [\n    stray_marker_word\n  ]\n}\n';
  writeFileSync(files.keystore, text, { mode: 0o600 });
  for (const args of [['list-keys'], ['revoke-key', 'gk_x'], ['--port', String(await freePort())]]) {
    const r = await runSvc(['gateway', ...args], { env: files.env });
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, `${args.join(' ')} printed ${lines.length} lines:\n${r.stderr}`);
    assert.ok(lines[0].includes(files.keystore), r.stderr);
    assert.match(
      lines[0],
      /is refused because it is not valid JSON \(Unexpected token 's'\); fix or restore/,
    );
    assert.doesNotMatch(lines[0], /stray_marker_word|"keys"/);
  }
});

test('a keystore path that is a folder is refused with advice to point at the file, not at permissions', async () => {
  const files = gatewayFiles(tmp.dir);
  const folder = join(tmp.dir, 'keys-folder');
  mkdirSync(folder);
  const env = { ...files.env, SVC_GATEWAY_KEYSTORE: folder };
  for (const args of [
    ['list-keys'],
    ['issue-key', '--name', 'x', '--workspace', '/tmp'],
    ['--port', String(await freePort())],
  ]) {
    const r = await runSvc(['gateway', ...args], { env });
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    assert.match(
      r.stderr,
      /is a folder, not a file; point --keystore or SVC_GATEWAY_KEYSTORE at the keys file/,
    );
    assert.doesNotMatch(r.stderr, /permissions/);
  }
});

test('a keystore that is not text is refused without its bytes on the terminal', async () => {
  const files = gatewayFiles(tmp.dir);
  // a binary file at the keystore path (a SQLite file, an archive): a NUL first, then an escape sequence
  writeFileSync(files.keystore, Buffer.from([0x00, 0x1b, 0x5b, 0x32, 0x4a, 0x07, 0xff]), { mode: 0o600 });
  for (const args of [['list-keys'], ['issue-key', '--name', 'x', '--workspace', '/tmp']]) {
    const r = await runSvc(['gateway', ...args], { env: files.env });
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    assert.match(
      r.stderr,
      /is refused because it is not valid JSON \(Unexpected token '\u2400'\); fix or restore/,
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the bytes that must not reach the terminal
    assert.doesNotMatch(r.stderr.trimEnd(), /[\u0000-\u0008\u000b-\u001f\u007f]/);
  }
});
