/**
 * Regenerates the protobuf-es code of the gRPC binding from the vendored
 * protos in proto/ (the normative A2A 1.0.1 a2a.proto and the googleapis
 * files it and google.rpc.Status need), and records a hash of every source
 * so a test notices a proto edited without regenerating.
 *
 *   npx tsx scripts/gen-proto.ts           write src/bindings/grpc/gen/
 *   npx tsx scripts/gen-proto.ts --check   regenerate into a temp dir, exit 1 if anything differs
 *
 * Needs `protoc` (Debian: apt-get install protobuf-compiler; checked with 3.21.12) and the
 * dev dependency @bufbuild/protoc-gen-es (same version as the @bufbuild/protobuf runtime).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, cpSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PROTO_DIR = join(ROOT, 'proto');
const OUT_DIR = join(ROOT, 'src/bindings/grpc/gen');
export const MANIFEST = 'proto-sources.sha256';

/** Every .proto we compile, relative to proto/. Imports must be listed too: protoc-gen-es links generated files. */
export const PROTO_FILES = [
  'a2a.proto',
  'google/api/annotations.proto',
  'google/api/http.proto',
  'google/api/client.proto',
  'google/api/field_behavior.proto',
  'google/api/launch_stage.proto',
  'google/rpc/status.proto',
  'google/rpc/error_details.proto',
] as const;

export function sourceManifest(protoDir = PROTO_DIR): string {
  return PROTO_FILES.map((f) => `${createHash('sha256').update(readFileSync(join(protoDir, f))).digest('hex')}  proto/${f}\n`).join('');
}

function generate(outDir: string): void {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  execFileSync('protoc', [
    `--plugin=protoc-gen-es=${join(ROOT, 'node_modules/.bin/protoc-gen-es')}`,
    `--es_out=${outDir}`,
    '--es_opt=target=ts,import_extension=js',
    `-I${PROTO_DIR}`,
    ...PROTO_FILES,
  ], { stdio: ['ignore', 'inherit', 'inherit'] });
  writeFileSync(join(outDir, MANIFEST), sourceManifest());
  // Keep a copy of the licence beside the generated code: it is derived from Apache-2.0 sources.
  cpSync(join(PROTO_DIR, 'LICENSE-Apache-2.0.txt'), join(outDir, 'LICENSE-Apache-2.0.txt'));
}

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}

/** Files that differ between two generated trees (relative paths); empty when identical. */
function diffTrees(a: string, b: string): string[] {
  const names = new Set([...listFiles(a).map((p) => relative(a, p)), ...listFiles(b).map((p) => relative(b, p))]);
  return [...names].filter((name) => {
    try {
      return !readFileSync(join(a, name)).equals(readFileSync(join(b, name)));
    } catch {
      return true;
    }
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--check')) {
    const tmp = mkdtempSync(join(tmpdir(), 'a2a-egress-proto-'));
    try {
      generate(join(tmp, 'gen'));
      const differ = diffTrees(join(tmp, 'gen'), OUT_DIR);
      if (differ.length > 0) {
        process.stderr.write(`generated code is out of date: ${differ.join(', ')}\nrun: npx tsx scripts/gen-proto.ts\n`);
        process.exit(1);
      }
      process.stdout.write('generated code matches proto/\n');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  } else {
    generate(OUT_DIR);
    process.stdout.write(`wrote ${OUT_DIR}\n`);
  }
}
