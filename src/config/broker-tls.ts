// TLS options for a connection to the broker, from broker.tls (weir's sessions, reconcile's $SYS read).
import { readFileSync } from 'node:fs';
import net from 'node:net';
import type { BrokerConfig } from './schema.js';

/** TLS options for a connection to the broker at `host`. */
export function brokerTlsOptions(
  cfg: BrokerConfig,
  host: string,
): { servername?: string; rejectUnauthorized: boolean; ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const t = cfg.tls;
  return {
    servername: t?.servername ?? (net.isIP(host) ? undefined : host),
    rejectUnauthorized: t?.verify ?? true,
    ca: t?.ca ? readFileSync(t.ca) : undefined,
    cert: t?.cert ? readFileSync(t.cert) : undefined,
    key: t?.key ? readFileSync(t.key) : undefined,
  };
}
