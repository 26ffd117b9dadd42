/** `svc analytics cache`: prompt-cache reads and writes per model (GET /analytics/cache_effectiveness). */
import { queryCacheEffectiveness } from '../../../analytics/index.ts';
import { defineReport, objectsTable } from './common.ts';

export default defineReport({
  name: 'cache',
  description: 'Prompt-cache hit rate and write share per model in the window',
  windowed: true,
  args: {},
  read: ({ store, window }) => queryCacheEffectiveness(store.kysely, window),
  table: objectsTable,
});
