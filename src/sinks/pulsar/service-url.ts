// service_url: what each transport accepts, checked when the configuration loads (the sink's lint)
// and parsed by the protocol transport when it connects — one rule for both.
import { PulsarError } from './errors.js';

/** pulsar://host[:port] or pulsar+ssl://host[:port]; a host is a name or a bracketed IPv6 address. */
const ONE_HOST = /^pulsar(\+ssl)?:\/\/([^:/,\s]+|\[[^\]]+\])(?::(\d{1,5}))?\/?$/;
/** The native client (the C++ library) also takes several hosts: pulsar://h1:6650,h2:6650. */
const HOST_LIST = /^pulsar(\+ssl)?:\/\/([^:/,\s]+|\[[^\]]+\])(:\d{1,5})?(,([^:/,\s]+|\[[^\]]+\])(:\d{1,5})?)*\/?$/;

/** What is wrong with service_url for `transport`, with what to write instead; undefined when it can work. */
export function serviceUrlProblem(url: string, transport: 'protocol' | 'native'): string | undefined {
  const text = url.trim();
  if (transport === 'native' ? HOST_LIST.test(text) : ONE_HOST.test(text)) {
    const ports = [...text.matchAll(/:(\d{1,5})(?=[,/]|$)/g)].map((m) => Number(m[1]));
    if (ports.every((p) => p >= 1 && p <= 65535)) return undefined;
    return 'a port must be 1-65535, e.g. pulsar://pulsar:6650';
  }
  if (!/^pulsar(\+ssl)?:\/\//.test(text)) return 'scheme must be pulsar:// or pulsar+ssl:// (TLS), e.g. pulsar://pulsar:6650';
  if (transport === 'protocol' && text.includes(','))
    return 'the protocol transport takes one host (its lookups find the others): pulsar://host:6650, or transport: native for a list';
  return 'expected pulsar://host:port or pulsar+ssl://host:port, e.g. pulsar://pulsar:6650';
}

/** The protocol transport's service URL as host, port and TLS; throws for one it cannot use. */
export function parseServiceUrl(url: string): { host: string; port: number; tls: boolean } {
  const problem = serviceUrlProblem(url, 'protocol');
  const m = ONE_HOST.exec(url.trim());
  if (problem || !m) throw new PulsarError('sink.pulsar.bad_service_url', `service_url '${url}': ${problem ?? 'not a pulsar URL'}`);
  const tls = m[1] !== undefined;
  return { host: m[2]!.replace(/^\[|\]$/g, ''), port: m[3] ? Number(m[3]) : tls ? 6651 : 6650, tls };
}
