/**
 * A plain-text table whose cells wrap onto several lines, sized for a
 * 100-column terminal, and the escaping that makes remote bytes safe to
 * print: every control, format (bidi, zero-width) and non-ASCII character is
 * shown as an escape, so the table's width is exactly what it computes and
 * nothing a remote sent can move the cursor, recolour the screen or reorder
 * text.
 */

export interface Column {
  readonly title: string;
  readonly width: number;
}

export const COLUMN_GAP = '  ';

const NAMED_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e' };

/** Printable ASCII stays; everything else becomes a visible escape such as \r, \e or \u202e. */
export function terminalSafe(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0x20 && cp < 0x7f) out += ch;
    else out += NAMED_ESCAPES[ch] ?? (cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\u{${cp.toString(16)}}`);
  }
  return out;
}

/** Cuts to `max` characters, marking the cut with "...". */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 3))}...`;
}

/** Wraps at spaces where it can, hard-cuts words longer than the width. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(' ')) {
      let rest = word;
      while (rest.length > width) {
        if (line !== '') {
          lines.push(line);
          line = '';
        }
        lines.push(rest.slice(0, width));
        rest = rest.slice(width);
      }
      if (line === '') line = rest;
      else if (line.length + 1 + rest.length <= width) line += ` ${rest}`;
      else {
        lines.push(line);
        line = rest;
      }
    }
    lines.push(line);
  }
  return lines;
}

/** Each cell is a list of lines (already terminal-safe); each line is wrapped to its column. */
export function renderTable(columns: readonly Column[], rows: readonly (readonly string[][])[]): string {
  const rule = columns.map((c) => '-'.repeat(c.width)).join(COLUMN_GAP);
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => cell.padEnd(columns[i]!.width))
      .join(COLUMN_GAP)
      .trimEnd();
  const out = [line(columns.map((c) => c.title)), rule];
  for (const row of rows) {
    const wrapped = row.map((cell, i) => cell.flatMap((text) => wrap(text, columns[i]!.width)));
    const height = Math.max(...wrapped.map((cell) => cell.length));
    for (let n = 0; n < height; n++) out.push(line(wrapped.map((cell) => cell[n] ?? '')));
    out.push('');
  }
  return out.join('\n');
}

/** Where each column starts in a rendered line: lets a reader (or a test) cut a column back out. */
export function columnOffsets(columns: readonly Column[]): number[] {
  const offsets: number[] = [];
  let at = 0;
  for (const c of columns) {
    offsets.push(at);
    at += c.width + COLUMN_GAP.length;
  }
  return offsets;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}
