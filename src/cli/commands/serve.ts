import { defineCommand } from 'citty';
import { notImplemented } from '../not-implemented.ts';

export default defineCommand({
  meta: { name: 'serve', description: 'Run the agent server (sessions, turns, WebSocket stream, analytics)' },
  args: {
    port: { type: 'string', description: 'Port to bind on 127.0.0.1 (default 8421)' },
    host: { type: 'string', description: 'Bind host; non-loopback values are refused' },
  },
  run() {
    notImplemented('svc serve');
  },
});
