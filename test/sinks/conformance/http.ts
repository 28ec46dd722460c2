// The http sink in the conformance suite: a webhook server of the test's own (one per target, so
// stopping it breaks nothing else), taking JSON array bodies, refusing with 400 a batch that holds
// a record marked `refuse` (the sink splits the batch until that record stands alone).
import { startWebhookServer, type WebhookServer } from '../../harness/webhook-server.js';
import { goodRecord, type SinkAdapter, type Target } from './adapter.js';

async function target(): Promise<{ server: WebhookServer; target: Target }> {
  const server = await startWebhookServer((req) =>
    req.records.some((r) => r.refuse === true) ? { status: 400, body: '{"error":"record refused"}' } : { status: 200, body: '{}' },
  );
  return {
    server,
    target: {
      settings: { url: `${server.url}/ingest`, timeout_ms: 2_000, headers: { Authorization: 'Bearer conformance' } },
      action: { format: 'json_array' },
      async stored(expected) {
        const until = Date.now() + 60_000;
        while (new Set(server.stored.map((r) => r.seq)).size < expected && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
        await server.dispose();
        return server.stored.map((r) => r.seq as number);
      },
    },
  };
}

export const httpAdapter: SinkAdapter = {
  target: async () => (await target()).target,
  async ownService() {
    const { server, target: t } = await target();
    return { service: server, target: t };
  },
  rejectable: (seq) => ({ ...goodRecord(seq), refuse: true }),
  rejection: /HTTP 400 Bad Request: \{"error":"record refused"\}/,
};
