/**
 * Cleans a /tmp/perf-<pid>.map before perf reads it. node --perf-basic-prof
 * appends one line per code object as it is created and never says when code
 * dies, so once V8 frees code (module wrappers after startup, deoptimized
 * functions) and reuses the addresses, the map holds two names for one
 * address and perf may pick the dead one (a profile then blames a JSON
 * module's top level for the hot path). The newest line for an address is
 * the live code: keep it, drop every older line that overlaps it.
 */

interface Entry {
  readonly start: bigint;
  readonly end: bigint;
  /** Line number: higher is newer. */
  readonly order: number;
  readonly line: string;
}

const LINE = /^([0-9a-fA-F]+) ([0-9a-fA-F]+) (.*)$/;

export function cleanPerfMap(text: string): { text: string; dropped: number } {
  const entries: Entry[] = [];
  for (const [order, line] of text.split('\n').entries()) {
    const m = LINE.exec(line);
    if (!m) continue;
    const start = BigInt(`0x${m[1]}`);
    entries.push({ start, end: start + BigInt(`0x${m[2]}`), order, line });
  }
  entries.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.order - b.order));
  // Sweep by address; `active` holds kept entries that may still overlap what comes next (few: overlaps are rare).
  const kept = new Set<Entry>();
  let active: Entry[] = [];
  for (const e of entries) {
    active = active.filter((a) => a.end > e.start);
    if (active.some((a) => a.order > e.order)) continue;
    for (const a of active) kept.delete(a);
    active = [e];
    kept.add(e);
  }
  const lines = [...kept].sort((a, b) => a.order - b.order).map((e) => e.line);
  return { text: lines.length > 0 ? `${lines.join('\n')}\n` : '', dropped: entries.length - kept.size };
}
