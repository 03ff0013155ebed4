/**
 * Keys that have a new name. The old name is still read, with a warning that
 * names the file and line; both names in one place are refused (they are the
 * same setting, so one of them would silently lose).
 *
 * `maxConnections` under `defaults` and a remote counted the sockets the
 * gateway opens to the remote, while `server.maxConnections` (and
 * `server.push.maxConnections`) count sockets callers open to the gateway.
 * The remote's key is now `maxUpstreamConnections`: it names the side of the
 * gateway those sockets are on, as the rest of the config does (`upstream`
 * is the remote side), and it holds for an HTTP pool and for gRPC sessions.
 */
import type { ConfigFile } from './schema.js';

export interface RenamedKey {
  readonly old: string;
  readonly current: string;
  /** Why it was renamed, told in the warning. */
  readonly why: string;
}

export const RENAMED_KEYS: readonly RenamedKey[] = [
  {
    old: 'maxConnections',
    current: 'maxUpstreamConnections',
    why: 'it counts sockets to the remote; server.maxConnections counts caller sockets',
  },
];

export interface RenamedKeyReport {
  /** Both names given in one place: the config is refused. */
  readonly problems: readonly string[];
  /** The old name given: the config loads, and these are logged. */
  readonly warnings: readonly string[];
}

/** Checks `defaults` and every remote; `locate` turns a key path into `file:line`. */
export function renamedKeyReport(file: ConfigFile, locate: (path: readonly string[]) => string): RenamedKeyReport {
  const problems: string[] = [];
  const warnings: string[] = [];
  const sections: [readonly string[], Readonly<Record<string, unknown>> | undefined][] = [
    [['defaults'], file.defaults],
    ...Object.entries(file.remotes).map(([name, remote]): [readonly string[], Readonly<Record<string, unknown>>] => [['remotes', name], remote]),
  ];
  for (const [path, section] of sections) {
    if (!section) continue;
    for (const { old, current, why } of RENAMED_KEYS) {
      if (!Object.hasOwn(section, old)) continue;
      const dotted = path.join('.');
      if (Object.hasOwn(section, current)) {
        problems.push(`${locate([...path, old])}: ${dotted}: ${old} and ${current} are one setting (${old} is its deprecated name); keep only ${current}`);
      } else {
        warnings.push(`${locate([...path, old])}: ${dotted}.${old} is deprecated; rename it ${current} (${why})`);
      }
    }
  }
  return { problems, warnings };
}
