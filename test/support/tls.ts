/**
 * Test PKI made at test time with the `selfsigned` package (no openssl
 * binary needed): one private CA, a server certificate for 127.0.0.1 signed
 * by it, a server certificate for another name (for hostname mismatch) and a
 * client certificate (for mTLS). EC P-256 keys keep generation fast. The PEMs
 * are also written to a temp directory because the gateway's config takes
 * file paths (`tls.caFile`, `certFile`, `keyFile`).
 */
import { writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { SecureVersion } from 'node:tls';
import { generate } from 'selfsigned';
import { closeServer, readBody, trackConnections, type ConnectionTracker } from './servers.js';
import { tempDir } from './temp-dir.js';

export interface Pem {
  readonly cert: string;
  readonly key: string;
}

export interface TestPki {
  readonly ca: Pem;
  /** SAN: IP 127.0.0.1 and DNS localhost. */
  readonly server: Pem;
  /** SAN: DNS other.example only: a valid chain with the wrong name. */
  readonly otherName: Pem;
  /** extKeyUsage clientAuth, signed by the same CA. */
  readonly client: Pem;
  /** The same PEMs as files, for config keys that take paths. */
  readonly files: { readonly caFile: string; readonly clientCertFile: string; readonly clientKeyFile: string };
}

const LIFETIME_MS = 24 * 3_600_000;

function validity(): { notBeforeDate: Date; notAfterDate: Date } {
  // A minute of slack either side: the CA and the certs are made a few ms apart.
  const now = Date.now();
  return { notBeforeDate: new Date(now - 60_000), notAfterDate: new Date(now + LIFETIME_MS) };
}

async function leaf(cn: string, ca: Pem, extensions: NonNullable<Parameters<typeof generate>[1]>['extensions']): Promise<Pem> {
  const made = await generate([{ name: 'commonName', value: cn }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    ...validity(),
    ca,
    extensions,
  });
  return { cert: made.cert, key: made.private };
}

export async function createTestPki(): Promise<TestPki> {
  const caMade = await generate([{ name: 'commonName', value: 'a2a-egress test CA' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    ...validity(),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const ca: Pem = { cert: caMade.cert, key: caMade.private };
  const serverUsage = [
    { name: 'basicConstraints' as const, cA: false },
    { name: 'keyUsage' as const, digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage' as const, serverAuth: true },
  ];
  const server = await leaf('127.0.0.1', ca, [
    ...serverUsage,
    { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] },
  ]);
  const otherName = await leaf('other.example', ca, [
    ...serverUsage,
    { name: 'subjectAltName', altNames: [{ type: 2, value: 'other.example' }] },
  ]);
  const client = await leaf('a2a-egress test client', ca, [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', clientAuth: true },
  ]);
  const dir = tempDir('a2a-egress-pki-');
  const write = (name: string, text: string): string => {
    const file = join(dir, name);
    writeFileSync(file, text, { mode: 0o600 });
    return file;
  };
  return {
    ca,
    server,
    otherName,
    client,
    files: { caFile: write('ca.pem', ca.cert), clientCertFile: write('client.pem', client.cert), clientKeyFile: write('client-key.pem', client.key) },
  };
}

export interface TlsUpstreamOptions {
  readonly identity: Pem;
  /** Require a client certificate signed by this CA (mTLS). */
  readonly requireClientCertFrom?: string;
  readonly maxVersion?: SecureVersion;
}

export interface TlsUpstream {
  /** https://127.0.0.1:PORT (no trailing slash). */
  readonly url: string;
  /** Requests that completed a handshake and reached the handler. */
  readonly requests: { readonly url: string; readonly clientCertCn: string | undefined }[];
  /** Handshakes that failed (wrong CA on the client side shows up here as an alert). */
  tlsErrors(): number;
  close(): Promise<void>;
}

/** An https server on 127.0.0.1 that answers every POST with a valid JSON-RPC result. */
export async function startTlsUpstream(opts: TlsUpstreamOptions): Promise<TlsUpstream> {
  const requests: { url: string; clientCertCn: string | undefined }[] = [];
  let tlsErrors = 0;
  const server: HttpsServer = createHttpsServer(
    {
      cert: opts.identity.cert,
      key: opts.identity.key,
      ...(opts.maxVersion ? { maxVersion: opts.maxVersion } : {}),
      ...(opts.requireClientCertFrom ? { ca: opts.requireClientCertFrom, requestCert: true, rejectUnauthorized: true } : {}),
    },
    (req: IncomingMessage, res: ServerResponse) => {
      void readBody(req).then((body) => {
        const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate?.();
        requests.push({ url: req.url ?? '', clientCertCn: peer && 'subject' in peer ? (peer.subject?.CN as string | undefined) : undefined });
        let id: unknown = null;
        try {
          id = (JSON.parse(body.toString('utf8')) as { id?: unknown }).id ?? null;
        } catch {
          // Not JSON: answer with id null.
        }
        const text = JSON.stringify({ jsonrpc: '2.0', id, result: { message: { messageId: 'tls-1', role: 'ROLE_AGENT', parts: [{ text: 'over tls' }] } } });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
        res.end(text);
      });
    },
  );
  server.on('tlsClientError', () => tlsErrors++);
  const tracker: ConnectionTracker = trackConnections(server as unknown as import('node:http').Server);
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as import('node:net').AddressInfo).port));
  });
  return {
    url: `https://127.0.0.1:${port}`,
    requests,
    tlsErrors: () => tlsErrors,
    close: () => closeServer(server as unknown as import('node:http').Server, tracker),
  };
}
