/**
 * Task states and roles: 0.3 writes kebab-case literals, 1.0 ProtoJSON enum
 * names (and a ProtoJSON parser accepts the enum's number too). These tables
 * are the mapping; the README's table is generated from them.
 */

/** [0.3 literal, 1.0 enum name]; the index in the proto enum is the 1.0 number (TASK_STATE_UNSPECIFIED = 0). */
export const TASK_STATES: readonly (readonly [v03: string, v10: string, v10Number: number])[] = [
  ['unknown', 'TASK_STATE_UNSPECIFIED', 0],
  ['submitted', 'TASK_STATE_SUBMITTED', 1],
  ['working', 'TASK_STATE_WORKING', 2],
  ['completed', 'TASK_STATE_COMPLETED', 3],
  ['failed', 'TASK_STATE_FAILED', 4],
  ['canceled', 'TASK_STATE_CANCELED', 5],
  ['input-required', 'TASK_STATE_INPUT_REQUIRED', 6],
  ['rejected', 'TASK_STATE_REJECTED', 7],
  ['auth-required', 'TASK_STATE_AUTH_REQUIRED', 8],
];

export const ROLES: readonly (readonly [v03: string, v10: string, v10Number: number])[] = [
  ['user', 'ROLE_USER', 1],
  ['agent', 'ROLE_AGENT', 2],
];

export const STATE_UNKNOWN_03 = 'unknown';
export const STATE_UNSPECIFIED_10 = 'TASK_STATE_UNSPECIFIED';
export const ROLE_UNSPECIFIED_10 = 'ROLE_UNSPECIFIED';

/**
 * States after which a stream ends (1.0 §3.1.2 and §9.4: a terminal or an interrupted state). A 0.3
 * status-update carries this as `final: true`; 1.0 carries it as the end of the stream.
 */
export const STREAM_ENDING_STATES_03: ReadonlySet<string> = new Set(['completed', 'canceled', 'failed', 'rejected', 'input-required', 'auth-required']);

const STATE_TO_10 = new Map(TASK_STATES.map(([v03, v10]) => [v03, v10]));
const STATE_TO_03 = new Map<string | number, string>(TASK_STATES.flatMap(([v03, v10, n]) => [[v10, v03], [n, v03]]));
const ROLE_TO_10 = new Map(ROLES.map(([v03, v10]) => [v03, v10]));
const ROLE_TO_03 = new Map<string | number, string>(ROLES.flatMap(([v03, v10, n]) => [[v10, v03], [n, v03]]));

/** A 0.3 state literal as its 1.0 name; `undefined` for anything that is not a 0.3 state. */
export function stateTo10(state: unknown): string | undefined {
  return typeof state === 'string' ? STATE_TO_10.get(state) : undefined;
}

/** A 1.0 state (name or number) as its 0.3 literal; `undefined` for anything else. */
export function stateTo03(state: unknown): string | undefined {
  return typeof state === 'string' || typeof state === 'number' ? STATE_TO_03.get(state) : undefined;
}

export function roleTo10(role: unknown): string | undefined {
  return typeof role === 'string' ? ROLE_TO_10.get(role) : undefined;
}

export function roleTo03(role: unknown): string | undefined {
  return typeof role === 'string' || typeof role === 'number' ? ROLE_TO_03.get(role) : undefined;
}
