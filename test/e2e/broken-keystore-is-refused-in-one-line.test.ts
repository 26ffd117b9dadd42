/**
 * A keystore that is not valid JSON is refused in one sentence on one line (DECISIONS §2), by the key
 * commands and by `svc gateway` at start: the reason names the JSON error, never an excerpt of the file
 * (V8's JSON.parse message quotes the text around the error, newlines included).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
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
