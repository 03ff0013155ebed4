/**
 * Just enough of a Dockerfile reader to check an image's recipe without a
 * container engine: stages, their RUN/COPY/USER/ENV/HEALTHCHECK/CMD, and a
 * list of what an image built from it would get wrong.
 */
import { existsSync, readFileSync } from 'node:fs';
import { choosesSemiSpace, YOUNG_GENERATION_FLAG } from '../../src/cluster/young-generation.js';
import { parseConfig } from '../../src/loader/load.js';

export interface Copy {
  readonly from?: string;
  readonly sources: readonly string[];
  readonly dest: string;
}

export interface Stage {
  readonly image: string;
  readonly name?: string;
  readonly runs: string[];
  readonly copies: Copy[];
  readonly env: Record<string, string>;
  user?: string;
  /** HEALTHCHECK's command as argv ([] when there is none). */
  healthcheck: string[];
  /** CMD as argv; the shell form becomes ["/bin/sh", "-c", text]. */
  cmd: string[];
  readonly expose: string[];
}

/** Joins `\` continuations and drops comments (parser directives included) and blank lines. */
function instructions(text: string): { keyword: string; rest: string }[] {
  const out: { keyword: string; rest: string }[] = [];
  let pending = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    const space = full.search(/\s/);
    out.push(space === -1 ? { keyword: full.toUpperCase(), rest: '' } : { keyword: full.slice(0, space).toUpperCase(), rest: full.slice(space + 1).trim() });
  }
  return out;
}

function argv(rest: string): string[] {
  if (rest.startsWith('[')) return JSON.parse(rest) as string[];
  return ['/bin/sh', '-c', rest];
}

const unquote = (s: string) => s.replace(/^(["'])(.*)\1$/, '$2');

export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const { keyword, rest } of instructions(text)) {
    if (keyword === 'FROM') {
      const [image = '', as, name] = rest.split(/\s+/);
      stages.push({
        image,
        ...(as?.toUpperCase() === 'AS' && name ? { name } : {}),
        runs: [],
        copies: [],
        env: {},
        healthcheck: [],
        cmd: [],
        expose: [],
      });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) continue;
    switch (keyword) {
      case 'RUN':
        stage.runs.push(rest);
        break;
      case 'COPY': {
        const tokens = rest.split(/\s+/);
        const flags = tokens.filter((tk) => tk.startsWith('--'));
        const paths = tokens.filter((tk) => !tk.startsWith('--'));
        const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
        stage.copies.push({ ...(from ? { from } : {}), sources: paths.slice(0, -1), dest: paths.at(-1) ?? '' });
        break;
      }
      case 'ENV':
        if (!rest.split(/\s+/)[0]!.includes('=')) {
          const [key = '', ...value] = rest.split(/\s+/);
          stage.env[key] = value.join(' ');
        } else {
          for (const pair of rest.match(/[^\s=]+=("[^"]*"|'[^']*'|\S*)/g) ?? []) {
            const at = pair.indexOf('=');
            stage.env[pair.slice(0, at)] = unquote(pair.slice(at + 1));
          }
        }
        break;
      case 'USER':
        stage.user = rest;
        break;
      case 'HEALTHCHECK': {
        const at = rest.search(/(^|\s)CMD\s/);
        stage.healthcheck = at === -1 ? [] : argv(rest.slice(at).trim().slice(3).trim());
        break;
      }
      case 'CMD':
        stage.cmd = argv(rest);
        break;
      case 'EXPOSE':
        stage.expose.push(...rest.split(/\s+/));
        break;
    }
  }
  return stages;
}

export function finalStage(stages: readonly Stage[]): Stage {
  const last = stages.at(-1);
  if (!last) throw new Error('Dockerfile has no FROM');
  return last;
}

function ignored(path: string, dockerignore: string): boolean {
  const clean = path.replace(/^\.\//, '').replace(/\/$/, '');
  return dockerignore
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('!'))
    .some((pattern) => {
      const p = pattern.replace(/^\//, '').replace(/\/$/, '');
      const glob = new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/.*)?$`);
      return glob.test(clean);
    });
}

export const CONFIG_DIR = '/etc/a2a-egress';
export const CONFIG_PATH = `${CONFIG_DIR}/gateway.yaml`;

/** Node release lines with support (LTS) when this was written; 20 reached end of life in April 2026. */
export const SUPPORTED_NODE_MAJORS: readonly number[] = [22, 24];

const nodeMajor = (image: string): number | undefined => {
  const match = /^node:(\d+)(?:[.-]|$)/.exec(image);
  return match ? Number(match[1]) : undefined;
};

/** What an image built from these stages would get wrong; [] when nothing. */
export function dockerfileProblems(stages: readonly Stage[], dockerignore: string): string[] {
  const problems: string[] = [];
  if (stages.length < 2) return ['needs a build stage and a final stage'];
  const final = finalStage(stages);
  const builders = stages.slice(0, -1);
  const build = builders.find((s) => s.runs.some((r) => /\bnpm ci\b/.test(r)) && s.runs.some((r) => /\bnpm run build\b/.test(r)));
  if (!build) problems.push('no build stage runs `npm ci` and `npm run build`');
  const installs = final.runs.filter((r) => /\bnpm ci\b/.test(r));
  if (installs.length === 0 || installs.some((r) => !/\bnpm ci\b[^&;|]*--omit=dev/.test(r))) problems.push('the final stage must RUN npm ci --omit=dev (and no other npm ci)');
  if (final.runs.some((r) => /\bnpm run build\b|\btsc\b/.test(r))) problems.push('the final stage must not build');
  if (!final.copies.some((c) => c.from !== undefined && c.from === build?.name && c.sources.some((s) => /\/dist\/?$/.test(s)))) {
    problems.push('the final stage must copy dist from the build stage');
  }
  const user = final.user?.split(':')[0];
  if (user === undefined || user === '' || user === 'root' || user === '0') problems.push('the final stage needs a non-root USER');
  if (final.healthcheck.length === 0) problems.push('the final stage needs a HEALTHCHECK with a command');
  else if (!final.healthcheck.join(' ').includes('node dist/healthcheck.js') || !existsSync('src/healthcheck.ts')) {
    problems.push('HEALTHCHECK should run node dist/healthcheck.js (built from src/healthcheck.ts)');
  }
  for (const stage of stages) {
    const major = nodeMajor(stage.image);
    if (major === undefined || !SUPPORTED_NODE_MAJORS.includes(major)) problems.push(`${stage.image}: use a supported Node LTS (${SUPPORTED_NODE_MAJORS.join(' or ')})`);
  }
  if (new Set(stages.map((s) => s.image)).size > 1) problems.push('every stage must use the same base image (build and run on one Node line)');
  const configCopy = final.copies.find((c) => c.from === undefined && c.sources.includes('config/gateway.yaml') && (c.dest === CONFIG_PATH || c.dest === `${CONFIG_DIR}/`));
  if (!configCopy) problems.push(`the final stage must put the bundled config at ${CONFIG_PATH}`);
  if (final.env.A2A_EGRESS_CONFIG !== CONFIG_PATH) problems.push(`ENV A2A_EGRESS_CONFIG must be ${CONFIG_PATH}`);
  // A V8 flag is read only when node starts: the image is one of the gateway's launchers (src/cluster/young-generation.ts).
  if (!choosesSemiSpace(final.cmd, final.env.NODE_OPTIONS)) problems.push(`the final stage must start node with the gateway's young generation (ENV NODE_OPTIONS=${YOUNG_GENERATION_FLAG})`);
  const cmd = final.cmd.join(' ');
  if (!/^node dist\/cli\.js\b/.test(cmd)) problems.push('CMD must run node dist/cli.js (exec form: node gets the signals)');
  // One source of truth for the ports: the config file (or $A2A_EGRESS_PORT), read the same way by the HEALTHCHECK.
  if (/--port\b|--config\b/.test(cmd)) problems.push('CMD must not pass --port or --config: the HEALTHCHECK cannot see them; use the config file and ENV');
  if (final.env.A2A_EGRESS_OPS_PORT !== undefined) problems.push('A2A_EGRESS_OPS_PORT is not read by anything: the ops port is server.opsPort');
  const bundledPort = String(parseConfig(readFileSync('config/gateway.yaml', 'utf8'), 'config/gateway.yaml').server.port);
  const port = final.env.A2A_EGRESS_PORT ?? bundledPort;
  if (!final.expose.includes(port)) problems.push(`EXPOSE must match the caller port (${port})`);
  for (const stage of stages) {
    for (const copy of stage.copies) {
      if (copy.from !== undefined) continue;
      for (const source of copy.sources) {
        if (!existsSync(source)) problems.push(`COPY source "${source}" does not exist`);
        else if (ignored(source, dockerignore)) problems.push(`COPY source "${source}" is excluded by .dockerignore`);
      }
    }
  }
  for (const needed of ['node_modules', 'dist', '.git']) {
    if (!ignored(needed, dockerignore)) problems.push(`.dockerignore should exclude ${needed}`);
  }
  return problems;
}
