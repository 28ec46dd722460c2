// http.tls: the certificate, key and optional client CA of weir's HTTPS side, read and checked in
// one place. `weir check` and `weir run` both load the config through config/load.ts, which calls
// httpTlsProblems, so a missing file or a key that does not match the certificate is an error at
// weir.yaml:line:col before anything listens; core/app/http.ts then builds its server from
// httpsOptions on the same (already resolved) paths.
import { readFileSync } from 'node:fs';
import type { ServerOptions } from 'node:https';
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { ConfigError, errorText } from '../errors.js';
import type { WeirFileConfig } from './schema.js';
import { locate, type YamlSource } from './yaml-source.js';

export type HttpTlsConfig = NonNullable<WeirFileConfig['http']['tls']>;

const FILE_KEYS = ['cert_file', 'key_file', 'client_ca_file'] as const;

/** The same settings with each path resolved against weir.yaml's directory (as rules_dir is). */
export function resolveHttpTls(tls: HttpTlsConfig, configFile: string): HttpTlsConfig {
  const dir = dirname(configFile);
  return {
    cert_file: resolve(dir, tls.cert_file),
    key_file: resolve(dir, tls.key_file),
    ...(tls.client_ca_file === undefined ? {} : { client_ca_file: resolve(dir, tls.client_ca_file) }),
  };
}

/**
 * Every problem with the files of a resolved http.tls, each at its key: unreadable, not PEM of
 * the right kind, or a key that is not the certificate's. Node would otherwise fail at listen
 * time with OpenSSL's text ("PEM routines::no start line"), naming no file.
 */
export function httpTlsProblems(tls: HttpTlsConfig, src: YamlSource): ConfigError[] {
  const errors: ConfigError[] = [];
  const at = (key: string) => ({ file: src.file, ...locate(src, ['http', 'tls', key]), path: `http.tls.${key}` });
  const texts = new Map<string, string>();
  for (const key of FILE_KEYS) {
    const file = tls[key];
    if (file === undefined) continue;
    try {
      texts.set(key, readFileSync(file, 'utf8'));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : errorText(err);
      errors.push(new ConfigError('config.unreadable', `cannot read ${file}: ${why}`, at(key)));
    }
  }
  const parsed = <T>(key: string, what: string, parse: (pem: string) => T): T | undefined => {
    const pem = texts.get(key);
    if (pem === undefined) return undefined;
    try {
      return parse(pem);
    } catch (err) {
      errors.push(new ConfigError('config.invalid_value', `${tls[key as keyof HttpTlsConfig]} is not ${what} (${errorText(err)})`, at(key)));
      return undefined;
    }
  };
  const cert = parsed('cert_file', 'a PEM certificate', (pem) => new X509Certificate(pem));
  const key = parsed<KeyObject>('key_file', 'a PEM private key', (pem) => createPrivateKey(pem));
  parsed('client_ca_file', 'a PEM certificate', (pem) => new X509Certificate(pem));
  if (cert && key && !cert.checkPrivateKey(key)) {
    errors.push(
      new ConfigError('config.invalid_value', `the key in ${tls.key_file} is not the private key of the certificate in ${tls.cert_file}`, at('key_file')),
    );
  }
  return errors;
}

/** node:https options for a resolved, checked http.tls: a client certificate required with client_ca_file. */
export function httpsOptions(tls: HttpTlsConfig): ServerOptions {
  return {
    cert: readFileSync(tls.cert_file),
    key: readFileSync(tls.key_file),
    ...(tls.client_ca_file === undefined
      ? {}
      : // exporter-toolkit's RequireAndVerifyClientCert: the handshake fails without a certificate this CA signed.
        { ca: readFileSync(tls.client_ca_file), requestCert: true, rejectUnauthorized: true }),
  };
}
