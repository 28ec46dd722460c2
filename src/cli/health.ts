// weir health: the container's HEALTHCHECK (bin/healthcheck.js runs it). It reads weir.yaml's
// `http:` section as weir run does (${ENV} interpolation, the schema's defaults) and asks /healthz
// there: over HTTP, or over HTTPS when http.tls is set, so a weir serving HTTPS is not reported
// unhealthy. Only the http section is read: a rule file with an error (weir run keeps its running
// rules then) or a sink whose environment is unset here is not the probe's business.
//
// HTTPS: the probe does not verify weir's certificate. It connects to the loopback address, which
// the certificate seldom names, sends no credential (/healthz needs none, with or without
// http.basic_auth) and reads only the status code: nothing a man in the middle could take or forge
// that matters more than the probe's verdict. With http.tls.client_ca_file every request needs a
// client certificate: --cert and --key give one; without them the probe counts a completed TLS
// handshake (weir's Certificate and Finished came back, so its event loop turns) as healthy,
// since the request after it is refused by design (TLS 1.3, node's default: the client finishes
// its side before the server checks the client's certificate).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { Node } from 'yaml';
import { HttpSpec, type WeirFileConfig } from '../config/schema.js';
import { validatePart } from '../config/validate.js';
import { interpolateEnv, parseYaml, type YamlSource } from '../config/yaml-source.js';
import { errorText } from '../errors.js';
import { CONFIG_OPTION, parse, usageError } from './args.js';
import type { Command } from './command.js';

const HELP = `usage: weir health [--config FILE] [--timeout-ms N] [--cert FILE --key FILE]

Asks the weir that runs with this weir.yaml whether it answers: GET /healthz at http.host and
http.port (the loopback address when http.host is 0.0.0.0 or ::), over HTTPS when http.tls is
set (weir's certificate is not verified: the probe sends nothing secret). With
http.tls.client_ca_file, --cert and --key present a client certificate; without them a completed
TLS handshake counts. Prints one line; exits 0 when healthy, 1 when not (the container image's
HEALTHCHECK runs it as bin/healthcheck.js, which exits 1 for a usage error too: Docker reserves 2).

  -c, --config FILE   weir.yaml of the weir to ask (default: ./weir.yaml)
  --timeout-ms N      give up after this long (default 2000; the image's HEALTHCHECK allows 3 s)
  --cert FILE         client certificate (PEM) for http.tls.client_ca_file
  --key FILE          its private key (PEM)
`;

type HttpConfig = WeirFileConfig['http'];

export const healthCommand: Command = {
  summary: "ask a running weir's /healthz, over HTTPS with http.tls (the image's HEALTHCHECK)",
  async run(args) {
    const p = parse(args, { ...CONFIG_OPTION, 'timeout-ms': { type: 'string' }, cert: { type: 'string' }, key: { type: 'string' } }, HELP);
    if ('exit' in p) return p.exit;
    const timeoutMs = p.values['timeout-ms'] === undefined ? 2000 : Number(p.values['timeout-ms']);
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || (p.values.cert === undefined) !== (p.values.key === undefined)) {
      return usageError('--timeout-ms takes a whole number of milliseconds; --cert and --key go together', HELP);
    }
    const file = p.values.config ?? 'weir.yaml';
    const cfg = httpSection(file, process.env);
    if (typeof cfg === 'string') {
      process.stdout.write(`unhealthy: ${cfg}\n`);
      return 1;
    }
    if (cfg.port === 0) {
      process.stdout.write(`unhealthy: ${file}: http.port is 0 (a free port picked at start), which a probe cannot know; set a port\n`);
      return 1;
    }
    let client: { cert: Buffer; key: Buffer } | undefined;
    try {
      if (p.values.cert !== undefined) client = { cert: readFileSync(p.values.cert), key: readFileSync(p.values.key!) };
    } catch (err) {
      process.stdout.write(`unhealthy: ${errorText(err)}\n`);
      return 1;
    }
    const verdict = await probe(cfg, client, timeoutMs);
    process.stdout.write(`${verdict.healthy ? 'healthy' : 'unhealthy'}: ${verdict.text}\n`);
    return verdict.healthy ? 0 : 1;
  },
};

/** weir.yaml's `http:` section, interpolated and defaulted as weir run reads it; or what is wrong with it (file:line:col). */
export function httpSection(file: string, env: NodeJS.ProcessEnv): HttpConfig | string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return `cannot read ${file}: ${errorText(err)}`;
  }
  const src = parseYaml(file, text);
  if (src.errors.length) return src.errors[0]!.message;
  interpolateEnv(src, env);
  const [from, to] = linesOf(src, 'http');
  const unset = src.errors.filter((e) => e.line !== undefined && e.line >= from && e.line <= to);
  const part = validatePart<HttpConfig>(HttpSpec, (src.doc.toJS() as { http?: unknown } | null)?.http ?? {}, src, ['http']);
  const errors = [...unset, ...part.errors];
  return errors.length ? errors.map((e) => e.message).join('; ') : part.value;
}

/** The first and last line of a top-level key's value (none: an empty range). */
function linesOf(src: YamlSource, key: string): [number, number] {
  const node = src.doc.get(key, true) as Node | undefined;
  if (!node?.range) return [1, 0];
  return [src.lines.linePos(node.range[0]).line, src.lines.linePos(node.range[2]).line];
}

interface Verdict {
  healthy: boolean;
  text: string;
}

function probe(cfg: HttpConfig, client: { cert: Buffer; key: Buffer } | undefined, timeoutMs: number): Promise<Verdict> {
  // Where weir listens on every address, ask it on the loopback one of the same family.
  const host = cfg.host === '0.0.0.0' || cfg.host === '' ? '127.0.0.1' : cfg.host === '::' ? '::1' : cfg.host;
  const scheme = cfg.tls ? 'https' : 'http';
  const where = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${cfg.port}/healthz`;
  if (cfg.tls?.client_ca_file !== undefined && client === undefined) return handshake(host, cfg.port, where, timeoutMs);
  return new Promise((resolve) => {
    const options: https.RequestOptions = { host, port: cfg.port, path: '/healthz', agent: false, timeout: timeoutMs };
    const req = cfg.tls ? https.get({ ...options, rejectUnauthorized: false, ...client }, answered) : http.get(options, answered);
    function answered(res: http.IncomingMessage): void {
      res.resume();
      resolve({ healthy: res.statusCode === 200, text: `${where}: ${res.statusCode}` });
    }
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', (err) => resolve({ healthy: false, text: `${where}: ${errorText(err)}` }));
  });
}

/** http.tls.client_ca_file without a client certificate: a completed TLS handshake is the answer. */
function handshake(host: string, port: number, where: string, timeoutMs: number): Promise<Verdict> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host, port, rejectUnauthorized: false, timeout: timeoutMs }, () => {
      socket.destroy();
      resolve({ healthy: true, text: `${where}: TLS handshake completed (http.tls.client_ca_file: /healthz itself needs --cert and --key)` });
    });
    socket.on('timeout', () => socket.destroy(new Error(`no handshake in ${timeoutMs} ms`)));
    socket.on('error', (err) => resolve({ healthy: false, text: `${where}: ${errorText(err)}` }));
  });
}
