/**
 * Waits for a server's slot-4 table to be rebuilt: the `pattern table rebuilt` line of its service log
 * (JSON lines on stderr) with the counts a test expects.
 */
export async function waitForPatternRebuild(
  output: () => { stderr: string },
  done: (line: { keys?: number; keys_with_a_choice?: number }) => boolean,
): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const lines = output()
      .stderr.split('\n')
      .filter((l) => l.includes('"pattern table rebuilt"'))
      .map((l) => JSON.parse(l) as { keys?: number; keys_with_a_choice?: number });
    if (lines.some(done)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the pattern table was never rebuilt as expected:\n${output().stderr.slice(-2000)}`);
}
