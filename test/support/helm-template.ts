/**
 * Renders the Helm chart in deploy/helm without helm (not installable from
 * the registries CI reaches). It implements the part of Go's text/template
 * and Helm's functions the chart uses, with Helm's semantics, and refuses
 * everything else loudly: a template that needs more fails its test instead
 * of rendering something helm would not.
 *
 * Supported: text; `{{ pipeline }}` with `{{-`/`-}}` trimming; comments
 * `{{/* *\/}}`; `if`/`else if`/`else`/`end`; `with`/`else`/`end`; `define`
 * (in _*.tpl) and `include`; fields `.A.b`, `.`, `$`, `$.A.b`; string and
 * number literals; pipes `|`. Functions: include, toYaml, nindent, indent,
 * quote, default, required, eq, not. Values are merged as helm does
 * (override maps merge key by key, null deletes a key).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';

export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'output'; pipeline: string }
  | { kind: 'if'; branches: { pipeline: string | undefined; body: Node[] }[] }
  | { kind: 'with'; pipeline: string; body: Node[]; otherwise: Node[] };

interface Action {
  readonly text: string;
  readonly trimLeft: boolean;
  readonly trimRight: boolean;
}

type Piece = { kind: 'text'; text: string } | { kind: 'action'; action: Action };

/** Splits a template into text and actions, applying the trim markers to the text around them. */
function lex(source: string, file: string): Piece[] {
  const pieces: Piece[] = [];
  let at = 0;
  while (at < source.length) {
    const open = source.indexOf('{{', at);
    if (open === -1) {
      pieces.push({ kind: 'text', text: source.slice(at) });
      break;
    }
    pieces.push({ kind: 'text', text: source.slice(at, open) });
    const close = source.indexOf('}}', open + 2);
    if (close === -1) throw new TemplateError(`${file}: unclosed action`);
    let inner = source.slice(open + 2, close);
    const trimLeft = /^-\s/.test(inner);
    const trimRight = /\s-$/.test(inner);
    if (trimLeft) inner = inner.slice(1);
    if (trimRight) inner = inner.slice(0, -1);
    pieces.push({ kind: 'action', action: { text: inner.trim(), trimLeft, trimRight } });
    at = close + 2;
  }
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i]!;
    if (piece.kind !== 'action') continue;
    const before = pieces[i - 1];
    const after = pieces[i + 1];
    if (piece.action.trimLeft && before?.kind === 'text') before.text = before.text.replace(/\s+$/, '');
    if (piece.action.trimRight && after?.kind === 'text') after.text = after.text.replace(/^\s+/, '');
  }
  return pieces;
}

/** Pieces → a tree; `define` blocks go to `defines`. */
function parseTemplate(source: string, file: string, defines: Map<string, Node[]>): Node[] {
  const pieces = lex(source, file);
  let i = 0;
  const block = (ends: readonly string[]): { nodes: Node[]; end: string } => {
    const nodes: Node[] = [];
    while (i < pieces.length) {
      const piece = pieces[i++]!;
      if (piece.kind === 'text') {
        if (piece.text !== '') nodes.push({ kind: 'text', text: piece.text });
        continue;
      }
      const text = piece.action.text;
      if (text.startsWith('/*')) {
        if (!text.endsWith('*/')) throw new TemplateError(`${file}: unclosed comment`);
        continue;
      }
      const word = /^[a-z]+/.exec(text)?.[0] ?? '';
      if (word === 'end' || word === 'else') {
        if (!ends.includes(word)) throw new TemplateError(`${file}: unexpected {{ ${text} }}`);
        return { nodes, end: text };
      }
      if (word === 'if') {
        const branches: { pipeline: string | undefined; body: Node[] }[] = [];
        let pipeline: string | undefined = text.slice(2).trim();
        for (;;) {
          const { nodes: body, end } = block(['else', 'end']);
          branches.push({ pipeline, body });
          if (end === 'end') break;
          const rest = end.slice(4).trim();
          if (rest === '') pipeline = undefined;
          else if (rest.startsWith('if ')) pipeline = rest.slice(3).trim();
          else throw new TemplateError(`${file}: unsupported {{ ${end} }}`);
          if (pipeline === undefined) {
            const last = block(['end']);
            branches.push({ pipeline: undefined, body: last.nodes });
            break;
          }
        }
        nodes.push({ kind: 'if', branches });
        continue;
      }
      if (word === 'with') {
        const { nodes: body, end } = block(['else', 'end']);
        const otherwise = end === 'end' ? [] : end.trim() === 'else' ? block(['end']).nodes : undefined;
        if (otherwise === undefined) throw new TemplateError(`${file}: unsupported {{ ${end} }} in with`);
        nodes.push({ kind: 'with', pipeline: text.slice(4).trim(), body, otherwise });
        continue;
      }
      if (word === 'define') {
        const name = /^define\s+"([^"]+)"$/.exec(text)?.[1];
        if (!name) throw new TemplateError(`${file}: bad define: ${text}`);
        defines.set(name, block(['end']).nodes);
        continue;
      }
      if (['range', 'template', 'block', 'break', 'continue'].includes(word) || text.includes(':=') || /(^|\s)\$\w/.test(text)) {
        throw new TemplateError(`${file}: unsupported by this renderer: {{ ${text} }}`);
      }
      nodes.push({ kind: 'output', pipeline: text });
    }
    if (ends.length > 0) throw new TemplateError(`${file}: missing {{ end }}`);
    return { nodes, end: '' };
  };
  return block([]).nodes;
}

/** Go template truth: false, 0, nil, "", and empty maps and lists are false. */
function truthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** Helm's toYaml drops the final newline. */
const toYaml = (value: unknown): string => (value === undefined || value === null ? 'null' : stringify(value, { lineWidth: 0 }).replace(/\n$/, ''));

const indentLines = (n: number, text: string): string =>
  text
    .split('\n')
    .map((line) => ' '.repeat(n) + line)
    .join('\n');

interface Scope {
  readonly dot: unknown;
  readonly root: unknown;
}

class Renderer {
  constructor(readonly defines: ReadonlyMap<string, Node[]>) {}

  render(nodes: readonly Node[], scope: Scope): string {
    let out = '';
    for (const node of nodes) {
      if (node.kind === 'text') out += node.text;
      else if (node.kind === 'output') out += this.print(this.pipeline(node.pipeline, scope), node.pipeline);
      else if (node.kind === 'if') {
        const branch = node.branches.find((b) => b.pipeline === undefined || truthy(this.pipeline(b.pipeline, scope)));
        if (branch) out += this.render(branch.body, scope);
      } else {
        const value = this.pipeline(node.pipeline, scope);
        out += truthy(value) ? this.render(node.body, { dot: value, root: scope.root }) : this.render(node.otherwise, scope);
      }
    }
    return out;
  }

  print(value: unknown, where: string): string {
    if (value === undefined || value === null) return '';
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
    throw new TemplateError(`{{ ${where} }} prints a map or list: use toYaml`);
  }

  pipeline(text: string, scope: Scope): unknown {
    if (/[()]/.test(text.replace(/"(?:[^"\\]|\\.)*"/g, '""'))) throw new TemplateError(`parentheses are not supported: ${text}`);
    const commands = splitOutsideQuotes(text, '|').map((c) => c.trim());
    let value: unknown;
    commands.forEach((command, index) => {
      const words = tokens(command);
      if (words.length === 0) throw new TemplateError(`empty command in: ${text}`);
      const [head, ...rest] = words;
      const isFunction = /^[a-zA-Z]\w*$/.test(head!) && !['true', 'false', 'nil'].includes(head!);
      if (!isFunction) {
        if (rest.length > 0 || index > 0) throw new TemplateError(`not a function: ${head} in: ${text}`);
        value = this.operand(head!, scope);
        return;
      }
      const args = rest.map((w) => this.operand(w, scope));
      if (index > 0) args.push(value);
      value = this.call(head!, args, scope);
    });
    return value;
  }

  operand(word: string, scope: Scope): unknown {
    if (word.startsWith('"')) return JSON.parse(word) as string;
    if (/^-?\d+(\.\d+)?$/.test(word)) return Number(word);
    if (word === 'true' || word === 'false') return word === 'true';
    if (word === 'nil') return null;
    let base: unknown;
    let path: string;
    if (word === '.') return scope.dot;
    if (word === '$') return scope.root;
    if (word.startsWith('$.')) [base, path] = [scope.root, word.slice(2)];
    else if (word.startsWith('.')) [base, path] = [scope.dot, word.slice(1)];
    else throw new TemplateError(`unsupported operand: ${word}`);
    let value = base;
    for (const key of path.split('.')) {
      if (value === undefined || value === null) throw new TemplateError(`nil pointer evaluating ${word} (at .${key})`);
      if (typeof value !== 'object') throw new TemplateError(`can't evaluate field ${key} in ${word}`);
      value = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
    }
    return value;
  }

  call(name: string, args: unknown[], scope: Scope): unknown {
    const arity = (n: number) => {
      if (args.length !== n) throw new TemplateError(`${name} takes ${n} arguments, got ${args.length}`);
    };
    switch (name) {
      case 'include': {
        arity(2);
        const body = this.defines.get(String(args[0]));
        if (!body) throw new TemplateError(`no template "${String(args[0])}" defined`);
        return this.render(body, { dot: args[1], root: scope.root });
      }
      case 'toYaml':
        arity(1);
        return toYaml(args[0]);
      case 'nindent':
        arity(2);
        return `\n${indentLines(Number(args[0]), String(args[1] ?? ''))}`;
      case 'indent':
        arity(2);
        return indentLines(Number(args[0]), String(args[1] ?? ''));
      case 'quote':
        arity(1);
        return JSON.stringify(args[0] === undefined || args[0] === null ? '' : String(args[0]));
      case 'default':
        arity(2);
        return truthy(args[1]) ? args[1] : args[0];
      case 'required':
        arity(2);
        if (args[1] === undefined || args[1] === null || args[1] === '') throw new TemplateError(String(args[0]));
        return args[1];
      case 'eq':
        arity(2);
        return args[0] === args[1];
      case 'not':
        arity(1);
        return !truthy(args[0]);
      default:
        throw new TemplateError(`function "${name}" is not supported by this renderer`);
    }
  }
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' && text[i - 1] !== '\\') quoted = !quoted;
    if (c === separator && !quoted) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}

function tokens(command: string): string[] {
  return command.match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
}

/** Helm's value merge: maps merge key by key, null removes a key, anything else replaces. */
export function mergeValues(base: unknown, override: unknown): unknown {
  if (override === undefined) return base;
  if (typeof base !== 'object' || base === null || Array.isArray(base) || typeof override !== 'object' || override === null || Array.isArray(override)) {
    return override;
  }
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(override)) {
    if (value === null) delete out[key];
    else out[key] = mergeValues(out[key], value);
  }
  return out;
}

export interface RenderOptions {
  readonly releaseName: string;
  readonly namespace?: string;
  readonly values?: unknown;
}

/** Renders every template of the chart; returns the YAML documents (empty ones dropped), as `helm template` prints them. */
export function renderChart(chartDir: string, options: RenderOptions): { source: string; text: string }[] {
  const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as { name: string; version: string; appVersion?: string };
  const defaults = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as unknown;
  const values = mergeValues(defaults, options.values);
  const root = {
    Values: values,
    Release: { Name: options.releaseName, Namespace: options.namespace ?? 'default', Service: 'Helm' },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
  };
  const dir = join(chartDir, 'templates');
  const files = readdirSync(dir).sort();
  const defines = new Map<string, Node[]>();
  const trees = new Map<string, Node[]>();
  for (const file of files) {
    const tree = parseTemplate(readFileSync(join(dir, file), 'utf8'), file, defines);
    if (!file.startsWith('_')) trees.set(file, tree);
  }
  const renderer = new Renderer(defines);
  const docs: { source: string; text: string }[] = [];
  for (const [file, tree] of trees) {
    const text = renderer.render(tree, { dot: root, root });
    for (const doc of text.split(/^---\s*$/m)) {
      if (doc.replace(/^\s*#.*$/gm, '').trim() !== '') docs.push({ source: file, text: doc });
    }
  }
  return docs;
}

/** Renders one template text with a context, for the renderer's own tests. */
export function renderText(template: string, context: unknown, defineText = ''): string {
  const defines = new Map<string, Node[]>();
  parseTemplate(defineText, '_helpers.tpl', defines);
  const tree = parseTemplate(template, 'test.yaml', defines);
  return new Renderer(defines).render(tree, { dot: context, root: context });
}
