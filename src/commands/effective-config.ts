/**
 * The effective config (`a2a-egress check`): the file with every default
 * merged in, as plain data to print. Nothing secret is shown: credentials
 * appear as where they come from (env var or file names, never values), a
 * password in any URL becomes "****", and TLS material is summarised, the
 * private key never shown.
 */
import type { GatewayConfig, RemoteConfig, ResolvedTls } from '../config/schema.js';

export const MASK = '****';

/** The URL with any password replaced by the mask (the user name stays: it helps tell stores apart). */
export function maskUrl(raw: string | URL): string {
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    return MASK;
  }
  if (url.password !== '') url.password = MASK;
  return url.href;
}

function tlsSummary(tls: ResolvedTls): Record<string, string> {
  const out: Record<string, string> = {};
  if (tls.ca) out.ca = `PEM, ${tls.ca.length} bytes`;
  if (tls.cert) out.cert = `PEM, ${tls.cert.length} bytes`;
  if (tls.key) out.key = MASK;
  if (tls.minVersion) out.minVersion = tls.minVersion;
  return out;
}

function remoteView(remote: RemoteConfig): Record<string, unknown> {
  const { rateLimit } = remote;
  return {
    url: maskUrl(remote.url),
    ...(remote.agentCardUrl ? { agentCardUrl: maskUrl(remote.agentCardUrl) } : {}),
    ...(remote.auth ? { auth: { ...remote.auth } } : {}),
    methods: [...remote.methods],
    versions: remote.versions ? [...remote.versions] : 'from the card',
    unversionedCard: remote.unversionedCard ?? 'remote',
    allowPrivateNetwork: remote.allowPrivateNetwork,
    keepRemoteErrorData: remote.keepRemoteErrorData,
    maxUpstreamConnections: remote.maxUpstreamConnections,
    forwardHeaders: [...remote.forwardHeaders],
    ...(Object.keys(remote.tls).length > 0 ? { tls: tlsSummary(remote.tls) } : {}),
    ...(remote.grpc ? { grpc: { ...remote.grpc } } : {}),
    ...(rateLimit ? { rateLimit: { ...rateLimit, ...(rateLimit.store ? { store: { ...rateLimit.store, url: maskUrl(rateLimit.store.url) } } : {}) } } : {}),
    circuitBreaker: { ...remote.circuitBreaker },
    retries: { ...remote.retries },
    timeouts: { ...remote.timeouts },
    limits: { ...remote.limits },
  };
}

export function effectiveConfig(config: GatewayConfig): Record<string, unknown> {
  const { server } = config;
  return {
    server: {
      ...server,
      ...(server.publicBaseUrl !== undefined ? { publicBaseUrl: maskUrl(server.publicBaseUrl) } : {}),
      ...(server.auth ? { auth: { ...server.auth } } : {}),
      // The gRPC listeners' TLS files are summarised like a remote's: the private key never shown.
      ...(server.grpc
        ? { grpc: { ...server.grpc, ...(server.grpc.tls ? { tls: { ...tlsSummary(server.grpc.tls), requireClientCert: server.grpc.tls.requireClientCert } } : {}) } }
        : {}),
    },
    remotes: Object.fromEntries([...config.remotes.values()].map((r) => [r.name, remoteView(r)])),
    // As written: header values are named by their environment variable only, and the endpoint holds no credentials.
    ...(config.telemetry ? { telemetry: config.telemetry } : {}),
  };
}
