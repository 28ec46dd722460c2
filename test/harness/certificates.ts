// A private CA and certificates it signs, made with the openssl CLI for a test: a server
// certificate for 127.0.0.1 (TLS to Mosquitto, weir's HTTPS side) and a client certificate for
// mutual TLS. Readable by all (0644 in a 0755 directory): Mosquitto runs as another user.
import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './process.js';

export interface Certificates {
  readonly dir: string;
  readonly cafile: string;
  readonly certfile: string;
  readonly keyfile: string;
  readonly clientCertfile: string;
  readonly clientKeyfile: string;
}

export function certificates(): Certificates {
  const dir = tempDir('tls');
  chmodSync(dir, 0o755);
  const f = (n: string) => join(dir, n);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.crt'), '-days', '2', '-subj', '/CN=weir-test-ca');
  const signed = (name: string, cn: string, ext: string) => {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`), '-subj', `/CN=${cn}`);
    writeFileSync(f(`${name}.ext`), `${ext}\n`);
    ssl(
      'x509',
      '-req',
      '-in',
      f(`${name}.csr`),
      '-CA',
      f('ca.crt'),
      '-CAkey',
      f('ca.key'),
      '-CAcreateserial',
      '-out',
      f(`${name}.crt`),
      '-days',
      '2',
      '-extfile',
      f(`${name}.ext`),
    );
  };
  signed('server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1');
  signed('client', 'prometheus', 'extendedKeyUsage=clientAuth');
  for (const n of ['ca.crt', 'server.crt', 'server.key', 'client.crt', 'client.key']) chmodSync(f(n), 0o644);
  return { dir, cafile: f('ca.crt'), certfile: f('server.crt'), keyfile: f('server.key'), clientCertfile: f('client.crt'), clientKeyfile: f('client.key') };
}
