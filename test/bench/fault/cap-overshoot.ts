/**
 * Concurrent cap overshoot with CJK text: one call of 4,000 CJK characters and `max_tokens` 200, for which
 * the fake bills 6,000 input tokens and the full 200 output tokens (a CJK character is 1–2 tokens, not
 * the quarter token of an English character), is priced once; a key gets a daily cap of 10 such calls;
 * then 50 run at once (half streaming). The spend written to the store must not pass the cap.
 */
import { Agent } from 'undici';
import type { GatewayHome } from '../processes.ts';
import type { BenchRequest } from '../requests.ts';
import { send } from './answers.ts';
import { ANTHROPIC_MODEL, OPENAI_MODEL } from './hostile-cases.ts';
import { costOfTurn, spendOf, withStore } from './store-checks.ts';

export interface CapOptions {
  url: string;
  home: GatewayHome;
  concurrent: number;
  /** Calls of the real billed cost the cap admits. */
  callsPerCap: number;
}

export interface CapResult {
  shape: 'openai' | 'anthropic';
  /** What the provider bills for one call, from the store. */
  billedPerCallUsd: number;
  capUsd: number;
  answered200: number;
  refused429: number;
  other: number;
  spendUsd: number;
  /** (spend − cap) / cap in %, 0 when within the cap. */
  overshootPct: number;
}

export const CJK_CHARS = 4000;
// each call takes 0.5 s upstream, as real calls take seconds: all of them are in flight together
const BILLED = '[[fake:usage=in:6000,out:200;slow-headers=500]]';

export async function runCapOvershoot(o: CapOptions): Promise<CapResult[]> {
  const out: CapResult[] = [];
  for (const shape of ['openai', 'anthropic'] as const) out.push(await capRound(shape, o));
  return out;
}

// --- internal ---

async function capRound(shape: 'openai' | 'anthropic', o: CapOptions): Promise<CapResult> {
  const probe = await send(o.url, cjkRequest(shape, o.home.token, false));
  if (!probe.complete || !probe.requestId)
    throw new Error(`cap: the pricing call failed: ${probe.status} ${probe.body.slice(0, 200)}`);
  const billed = withStore(o.home.files.db, (db) => costOfTurn(db, probe.requestId as string));
  if (billed === undefined || !(billed > 0))
    throw new Error('cap: the pricing call has no cost in the store');
  const capUsd = Number((billed * o.callsPerCap).toFixed(6));
  const key = await o.home.issueKey(['--daily-cap-usd', capUsd.toFixed(6)]);
  const agent = new Agent({ connections: o.concurrent });
  const answers = await Promise.all(
    Array.from({ length: o.concurrent }, (_, i) =>
      send(o.url, cjkRequest(shape, key.token, i % 2 === 1), agent),
    ),
  );
  await agent.destroy();
  const spend = withStore(o.home.files.db, (db) => spendOf(db, key.keyId));
  const answered200 = answers.filter((a) => a.complete).length;
  const refused429 = answers.filter((a) => a.status === 429 && a.body.includes('quota_exceeded')).length;
  return {
    shape,
    billedPerCallUsd: billed,
    capUsd,
    answered200,
    refused429,
    other: answers.length - answered200 - refused429,
    spendUsd: spend.spendUsd,
    overshootPct: Math.max(0, ((spend.spendUsd - capUsd) / capUsd) * 100),
  };
}

function cjkRequest(shape: 'openai' | 'anthropic', token: string, stream: boolean): BenchRequest {
  const content = `${cjkText(CJK_CHARS)} ${BILLED}`;
  const common = {
    max_tokens: 200,
    messages: [{ role: 'user', content }],
    ...(stream ? { stream: true } : {}),
  };
  if (shape === 'openai') {
    return {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ model: OPENAI_MODEL, ...common }),
    };
  }
  return {
    method: 'POST',
    path: '/v1/messages',
    headers: { 'content-type': 'application/json', 'x-api-key': token, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: ANTHROPIC_MODEL, ...common }),
  };
}

/** `n` common CJK characters (3 UTF-8 bytes each), a deterministic mix. */
function cjkText(n: number): string {
  const chars = [...COMMON_CJK];
  return Array.from({ length: n }, (_, i) => chars[(i * 7) % chars.length]).join('');
}

const COMMON_CJK =
  '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严';
