/**
 * Push notifications through the gateway (issue 16). What the wiring uses:
 * - `rewritePushRequest(call, ctx)`: on every call, in the caller's generation, before the version bridge;
 * - `restorePushReply(call, outcome, push)`: on every result, in the caller's generation, after the bridge back;
 * - `startPushListener(deps)` / `close()`: with the gateway's listeners, when `server.push` is configured;
 * - `PushServerFileSchema` (the `server.push` config fragment) and `resolvePushConfig` (YAML object → settings);
 * - `PushMetrics` (registered in the gateway's registry).
 */
export { builtinPush, PushServerFileSchema, PushServerSchema, type PushServerFile } from '../config/push.js';
export { PushConfigError, resolvePushConfig, type PushSettings } from './config.js';
export { startPushListener, type PushListener, type PushListenerDeps } from './listener.js';
export { PushMetrics } from './metrics.js';
export { MINTED_SCHEME, rewritePushRequest, type PushGateway, type PushRequestRewrite, type PushRewriteContext } from './outbound.js';
export { deliveryOutcomes, pushRefusals, type DeliveryOutcome, type PushRefusal } from './reasons.js';
export { restorePushReply, type PushReplyRestore } from './reply.js';
