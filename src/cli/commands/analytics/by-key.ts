/** `svc analytics by-key`: spend per gateway key and inbound shape (GET /analytics/by_key). */
import { parseGatewayKey, queryByKey } from '../../../analytics/index.ts';
import { defineReport, fieldCell, flagName } from './common.ts';

export default defineReport({
  name: 'by-key',
  description: 'Spend per gateway key (and per inbound shape) in the window',
  windowed: true,
  args: { 'gateway-key': { type: 'string', description: 'Only this gateway key id' } },
  check: (raw) => parseGatewayKey(raw, flagName),
  read: ({ store, raw, window }) =>
    queryByKey(store.kysely, { window, gatewayKey: parseGatewayKey(raw, flagName) }),
  table: (rows) => ({
    header: ['GATEWAY_KEY_ID', 'INBOUND_SHAPE', 'COST_USD', 'CALL_COUNT', 'INPUT_TOKENS', 'OUTPUT_TOKENS'],
    rows: rows.flatMap((k) => [
      [
        k.gateway_key_id ?? '(in-process)',
        '(all)',
        fieldCell(k, 'cost_usd'),
        k.call_count,
        k.input_tokens,
        k.output_tokens,
      ],
      ...k.by_inbound_shape.map((s) => [
        k.gateway_key_id ?? '(in-process)',
        s.inbound_shape ?? '(in-process)',
        fieldCell(s, 'cost_usd'),
        s.call_count,
        null,
        null,
      ]),
    ]),
  }),
});
