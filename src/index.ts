/**
 * The package's public API, for embedding the gateway in another Node
 * program. Everything else under dist/ is internal and may change between
 * releases.
 *
 *   import { createGateway, loadConfig } from 'a2a-egress';
 *   const gateway = await createGateway(loadConfig('gateway.yaml'));
 *   const { url } = await gateway.listen();
 */
export { createGateway, buildGateway, type Gateway, type GatewayOptions } from './server.js';
export { loadConfigFile as loadConfig, parseConfig, type ParseOptions } from './loader/load.js';
export { ConfigError } from './config/errors.js';
export { configJsonSchema } from './config/json-schema.js';
export { CredentialError } from './policy/credentials.js';
export type { AuthConfig } from './config/auth.js';
export type {
  CircuitBreakerConfig,
  ConfigFile,
  GatewayConfig,
  Limits,
  RateLimit,
  RateLimitStore,
  RemoteConfig,
  ResolvedTls,
  RetryConfig,
  ServerConfig,
  Timeouts,
} from './config/schema.js';
export { gatewayErrors, type Reason } from './envelope/codes.js';
export { VERSION } from './version.js';
