/**
 * The version bridge (issue 17): translation between A2A 0.3 and 1.0 of
 * request params, results, stream events, errors and agent cards. Pure
 * functions on already-normalized JSON; nothing here knows a binding, a socket
 * or a clock. Each entry point returns `Bridged`: the translated value and the
 * labels of what had no counterpart, or (`ok: false`) the JSON-RPC code to
 * answer with when the whole input has none.
 *
 * The output may share sub-trees with the input (metadata, data values, strings are not copied): both are
 * treated as immutable, as everything after the normalizer treats parsed values.
 *
 * Output size: for any input, the JSON text of the output is at most
 * OUTPUT_GROWTH_FACTOR times that of the input plus OUTPUT_GROWTH_CONSTANT bytes
 * (test/unit/bridge-bounds.test.ts).
 */
export { bridgeCard, TARGET_PROTOCOL_VERSION, type BridgeCardOptions } from './card.js';
export { bridgeError } from './errors.js';
export { bridgeEvent } from './events.js';
export { MAX_DROP_LABELS, type Bridged } from './json.js';
export { bridgeParams } from './params.js';
export { bridgeResult } from './results.js';

/** Worst case per element: a 1.0 data part `{"data":0}` becomes `{"kind":"data","data":{"value":0},"metadata":{"data_part_compat":true}}`. */
export const OUTPUT_GROWTH_FACTOR = 8;
/** The members a translation always writes at the top (a card's required skeleton is the largest). */
export const OUTPUT_GROWTH_CONSTANT = 512;
