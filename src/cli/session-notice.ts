// What `weir run` says at start about its broker sessions, because their lifetime outlives the
// process: a persistent session in a share group keeps taking a share of the messages while weir
// is away, so a one-off run under the default client id quietly takes production's messages into
// a queue nobody reads until that id connects again (docs/operations.md, sessions).
import type { WeirConfig } from '../config/types.js';
import type { SessionMode } from '../core/ingest/mqtt-session.js';
import type { Logger } from '../log.js';

export function logSessionNotice(cfg: WeirConfig, mode: SessionMode, log: Logger): void {
  const b = cfg.broker;
  const clientIds = Array.from({ length: b.connections }, (_, i) => `${b.client_id}-${i}`);
  const where = b.share_group ? `share group '${b.share_group}'` : 'plain subscriptions';
  if (mode === 'transient') {
    log.info(
      { client_ids: clientIds, share_group: b.share_group, clean_start: true, session_expiry_s: 0 },
      `transient sessions (--transient): weir joins ${where} with clean start and session expiry 0; the broker drops the sessions at disconnect and deals them nothing while weir is away`,
    );
    return;
  }
  // Only the default id is worth a warning: an id set in weir.yaml is the operator's decision.
  if (cfg.clientIdSet) return;
  const expiry = b.protocol_version === 5 ? `session expiry ${b.session_expiry_s} s` : 'no expiry (MQTT 3.1.1)';
  log.warn(
    { client_ids: clientIds, share_group: b.share_group, session_expiry_s: b.protocol_version === 5 ? b.session_expiry_s : undefined },
    `broker.client_id is not set in ${cfg.file}: weir joins ${where} with a persistent session (${expiry}) under the default client id '${b.client_id}', and the broker keeps dealing it messages while it is away. Give each replica its own broker.client_id, or use weir run --transient for a one-off run`,
  );
}
