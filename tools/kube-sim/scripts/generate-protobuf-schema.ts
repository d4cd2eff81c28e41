/**
 * Generates src/protobuf-schema.ts, the protobuf field tables kube-sim decodes request bodies with,
 * from the Go types of k8s.io/api and k8s.io/apimachinery (their `protobuf:"..."` struct tags give
 * field numbers, the Go types the wire encoding, the `json:"..."` tags the JSON names, `,inline`
 * and `omitempty`). Run with checkouts of both repositories at the release kube-sim imitates:
 *
 *   npx tsx tools/kube-sim/scripts/generate-protobuf-schema.ts <kubernetes/api> <kubernetes/apimachinery> [git tag]
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [apiRepo, machineryRepo, tag = 'v0.32.4'] = process.argv.slice(2);
if (!apiRepo || !machineryRepo) {
  process.stderr.write('usage: generate-protobuf-schema.ts <kubernetes/api checkout> <kubernetes/apimachinery checkout> [tag]\n');
  process.exit(2);
}

/** Go package → the files of its types and the key its messages get. */
const PACKAGES: { key: string; repo: string; files: string[]; importPath: string }[] = [
  { key: 'meta.v1', repo: machineryRepo, files: ['pkg/apis/meta/v1/types.go'], importPath: 'k8s.io/apimachinery/pkg/apis/meta/v1' },
  { key: 'core.v1', repo: apiRepo, files: ['core/v1/types.go'], importPath: 'k8s.io/api/core/v1' },
  { key: 'apps.v1', repo: apiRepo, files: ['apps/v1/types.go'], importPath: 'k8s.io/api/apps/v1' },
  { key: 'policy.v1', repo: apiRepo, files: ['policy/v1/types.go'], importPath: 'k8s.io/api/policy/v1' },
  { key: 'certificates.v1', repo: apiRepo, files: ['certificates/v1/types.go'], importPath: 'k8s.io/api/certificates/v1' },
  { key: 'coordination.v1', repo: apiRepo, files: ['coordination/v1/types.go'], importPath: 'k8s.io/api/coordination/v1' },
  { key: 'authentication.v1', repo: apiRepo, files: ['authentication/v1/types.go'], importPath: 'k8s.io/api/authentication/v1' },
  { key: 'authorization.v1', repo: apiRepo, files: ['authorization/v1/types.go'], importPath: 'k8s.io/api/authorization/v1' },
  { key: 'rbac.v1', repo: apiRepo, files: ['rbac/v1/types.go'], importPath: 'k8s.io/api/rbac/v1' },
];

/** Types with their own wire format, by fully qualified Go name. */
const SPECIAL: Record<string, string> = {
  'k8s.io/apimachinery/pkg/apis/meta/v1.Time': 'time',
  'k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime': 'microtime',
  'k8s.io/apimachinery/pkg/apis/meta/v1.Duration': 'duration',
  'k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1': 'raw',
  'k8s.io/apimachinery/pkg/api/resource.Quantity': 'quantity',
  'k8s.io/apimachinery/pkg/util/intstr.IntOrString': 'intorstring',
  'k8s.io/apimachinery/pkg/runtime.RawExtension': 'raw',
  'k8s.io/apimachinery/pkg/types.UID': 'string',
};

/** Top-level kinds a request body may carry: `<apiVersion>/<Kind>` → message. */
const KINDS: Record<string, string> = {
  'v1/Namespace': 'core.v1.Namespace', 'v1/Node': 'core.v1.Node', 'v1/Pod': 'core.v1.Pod', 'v1/Secret': 'core.v1.Secret',
  'v1/ConfigMap': 'core.v1.ConfigMap', 'v1/ServiceAccount': 'core.v1.ServiceAccount', 'v1/Event': 'core.v1.Event',
  'apps/v1/Deployment': 'apps.v1.Deployment', 'apps/v1/ReplicaSet': 'apps.v1.ReplicaSet', 'apps/v1/DaemonSet': 'apps.v1.DaemonSet', 'apps/v1/StatefulSet': 'apps.v1.StatefulSet',
  'policy/v1/PodDisruptionBudget': 'policy.v1.PodDisruptionBudget', 'policy/v1/Eviction': 'policy.v1.Eviction',
  'certificates.k8s.io/v1/CertificateSigningRequest': 'certificates.v1.CertificateSigningRequest',
  'coordination.k8s.io/v1/Lease': 'coordination.v1.Lease',
  'authentication.k8s.io/v1/TokenRequest': 'authentication.v1.TokenRequest', 'authentication.k8s.io/v1/TokenReview': 'authentication.v1.TokenReview',
  'authentication.k8s.io/v1/SelfSubjectReview': 'authentication.v1.SelfSubjectReview',
  'authorization.k8s.io/v1/SelfSubjectAccessReview': 'authorization.v1.SelfSubjectAccessReview', 'authorization.k8s.io/v1/SubjectAccessReview': 'authorization.v1.SubjectAccessReview',
  'authorization.k8s.io/v1/LocalSubjectAccessReview': 'authorization.v1.LocalSubjectAccessReview', 'authorization.k8s.io/v1/SelfSubjectRulesReview': 'authorization.v1.SelfSubjectRulesReview',
  'rbac.authorization.k8s.io/v1/Role': 'rbac.v1.Role', 'rbac.authorization.k8s.io/v1/ClusterRole': 'rbac.v1.ClusterRole',
  'rbac.authorization.k8s.io/v1/RoleBinding': 'rbac.v1.RoleBinding', 'rbac.authorization.k8s.io/v1/ClusterRoleBinding': 'rbac.v1.ClusterRoleBinding',
  DeleteOptions: 'meta.v1.DeleteOptions',
};

interface GoField {
  name: string;
  goType: string;
  json: string;
  omitempty: boolean;
  inline: boolean;
  number: number;
}

interface GoPackage {
  key: string;
  importPath: string;
  imports: Map<string, string>;
  structs: Map<string, GoField[]>;
  aliases: Map<string, string>;
}

function show(repo: string, file: string): string {
  return execFileSync('git', ['-C', repo, 'show', `${tag}:${file}`], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

function parsePackage(spec: (typeof PACKAGES)[number]): GoPackage {
  const pkg: GoPackage = { key: spec.key, importPath: spec.importPath, imports: new Map(), structs: new Map(), aliases: new Map() };
  for (const file of spec.files) {
    const text = show(spec.repo, file);
    const importBlock = /^import \(([\s\S]*?)^\)/m.exec(text)?.[1] ?? '';
    for (const line of importBlock.split('\n')) {
      const m = /^\s*(\w+)?\s*"([^"]+)"/.exec(line);
      if (m) {
        pkg.imports.set(m[1] ?? m[2].split('/').pop() ?? '', m[2]);
      }
    }
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const struct = /^type (\w+) struct \{/.exec(lines[i]);
      if (struct) {
        const fields: GoField[] = [];
        for (i++; i < lines.length && lines[i] !== '}'; i++) {
          const line = lines[i].replace(/\/\/.*$/, '');
          const tick = line.indexOf('`');
          if (tick < 0) {
            continue;
          }
          const tags = line.slice(tick + 1, line.lastIndexOf('`'));
          const proto = /protobuf:"([^"]*)"/.exec(tags)?.[1];
          if (!proto) {
            continue;
          }
          const words = line.slice(0, tick).trim().split(/\s+/);
          const goType = words.length === 2 ? words[1] : words[0];
          const json = /json:"([^"]*)"/.exec(tags)?.[1] ?? '';
          const [jsonName, ...jsonFlags] = json.split(',');
          const protoParts = proto.split(',');
          const protoName = protoParts.find((p) => p.startsWith('name='))?.slice(5) ?? '';
          fields.push({
            name: words.length === 2 ? words[0] : goType,
            goType,
            json: jsonName || protoName,
            omitempty: jsonFlags.includes('omitempty'),
            inline: jsonFlags.includes('inline'),
            number: Number(protoParts[1]),
          });
        }
        pkg.structs.set(struct[1], fields);
        continue;
      }
      const alias = /^type (\w+) ([^{=]+?)\s*$/.exec(lines[i]);
      if (alias) {
        pkg.aliases.set(alias[1], alias[2].trim());
      }
    }
  }
  return pkg;
}

const packages = PACKAGES.map(parsePackage);
const byImport = new Map(packages.map((p) => [p.importPath, p]));
const messages = new Map<string, [number, string, string, number][]>();
const FLAG_REPEATED = 1;
const FLAG_KEEP_ZERO = 2;
const FLAG_INLINE = 4;

/** The schema type of a Go type seen from a package: a scalar, a special, `map:<v>`, `list:<v>` or a message key. */
function resolve(pkg: GoPackage, goType: string): string {
  if (goType.startsWith('*')) {
    return resolve(pkg, goType.slice(1));
  }
  if (goType === '[]byte') {
    return 'bytes';
  }
  if (goType.startsWith('[]')) {
    return `list:${resolve(pkg, goType.slice(2))}`;
  }
  const map = /^map\[[\w.]+\](.+)$/.exec(goType);
  if (map) {
    return `map:${resolve(pkg, map[1])}`;
  }
  if (['string'].includes(goType)) {
    return 'string';
  }
  if (goType === 'bool') {
    return 'bool';
  }
  if (/^u?int(8|16|32|64)?$/.test(goType)) {
    return 'int';
  }
  if (goType === 'float64' || goType === 'float32') {
    return 'double';
  }
  const dot = goType.indexOf('.');
  const owner = dot > 0 ? byImport.get(pkg.imports.get(goType.slice(0, dot)) ?? '') : pkg;
  const importPath = dot > 0 ? (pkg.imports.get(goType.slice(0, dot)) ?? goType.slice(0, dot)) : pkg.importPath;
  const name = dot > 0 ? goType.slice(dot + 1) : goType;
  const special = SPECIAL[`${importPath}.${name}`];
  if (special) {
    return special;
  }
  if (!owner) {
    throw new Error(`unknown type ${goType} in ${pkg.key}`);
  }
  if (owner.structs.has(name)) {
    define(owner, name);
    return `${owner.key}.${name}`;
  }
  const alias = owner.aliases.get(name);
  if (alias) {
    const target = resolve(owner, alias);
    if (target.startsWith('list:')) {
      // gogo wraps named slices (ExtraValue) in a message whose field 1 holds the items.
      const key = `${owner.key}.${name}`;
      if (!messages.has(key)) {
        messages.set(key, [[1, 'items', target.slice(5), FLAG_REPEATED]]);
      }
      return `wrapped:${key}`;
    }
    return target;
  }
  throw new Error(`cannot resolve ${goType} in ${pkg.key}`);
}

function define(pkg: GoPackage, name: string): void {
  const key = `${pkg.key}.${name}`;
  if (messages.has(key)) {
    return;
  }
  const fields: [number, string, string, number][] = [];
  messages.set(key, fields);
  for (const field of pkg.structs.get(name) ?? []) {
    let type = resolve(pkg, field.goType);
    let flags = 0;
    if (type.startsWith('list:')) {
      type = type.slice(5);
      flags |= FLAG_REPEATED;
    }
    if (field.goType.startsWith('*') || !field.omitempty) {
      flags |= FLAG_KEEP_ZERO;
    }
    if (field.inline) {
      flags |= FLAG_INLINE;
    }
    fields.push([field.number, field.inline ? '' : field.json, type, flags]);
  }
}

const kinds: Record<string, string> = {};
for (const [kind, message] of Object.entries(KINDS)) {
  const [pkgKey, name] = [message.slice(0, message.lastIndexOf('.')), message.slice(message.lastIndexOf('.') + 1)];
  const pkg = packages.find((p) => p.key === pkgKey);
  if (!pkg) {
    throw new Error(`no package ${pkgKey}`);
  }
  define(pkg, name);
  kinds[kind] = message;
}

const sorted = Object.fromEntries([...messages.entries()].sort(([a], [b]) => a.localeCompare(b)));
const out = `// Generated by tools/kube-sim/scripts/generate-protobuf-schema.ts from k8s.io/api and
// k8s.io/apimachinery ${tag}; do not edit. Each field: [number, JSON name ('' = inlined), type, flags]
// with flags 1 = repeated, 2 = keep zero values (pointer or not omitempty), 4 = inlined in JSON.
export type ProtoField = readonly [number, string, string, number];
export const PROTOBUF_MESSAGES: Readonly<Record<string, readonly ProtoField[]>> = ${JSON.stringify(sorted)};
export const PROTOBUF_KINDS: Readonly<Record<string, string>> = ${JSON.stringify(kinds)};
`;
writeFileSync(join(import.meta.dirname, '..', 'src', 'protobuf-schema.ts'), out);
process.stdout.write(`${messages.size} messages, ${Object.keys(kinds).length} kinds\n`);
