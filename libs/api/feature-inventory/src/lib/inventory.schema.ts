/** The inventory file's `apiVersion` and `kind`: a later, incompatible format gets a new version. */
export const INVENTORY_API_VERSION = 'ccos-scaler.io/v1';
export const INVENTORY_KIND = 'Inventory';

/** Where the machine that applies a file finds a host's SSH secret: never the secret itself. */
const credential = {
  type: 'object',
  description:
    'Where the machine running `ccos-scaler apply` reads the SSH secret: exactly one of passwordFile, passwordEnv, privateKeyFile, privateKeyEnv, and for a key optionally passphraseFile or passphraseEnv. The file never holds a secret.',
  additionalProperties: false,
  properties: {
    passwordFile: { type: 'string', minLength: 1, description: 'A file holding the password (one line).' },
    passwordEnv: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'An environment variable holding the password.' },
    privateKeyFile: { type: 'string', minLength: 1, description: 'A PEM or OpenSSH private key file.' },
    privateKeyEnv: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'An environment variable holding the private key.' },
    passphraseFile: { type: 'string', minLength: 1, description: 'A file holding the private key\'s passphrase.' },
    passphraseEnv: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'An environment variable holding the private key\'s passphrase.' },
  },
} as const;

const labels = {
  type: 'object',
  description: 'The labels this service gives the node (others set on the Node are left alone).',
  maxProperties: 64,
  additionalProperties: { type: 'string', maxLength: 63 },
} as const;

const taints = {
  type: 'array',
  maxItems: 32,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['key', 'effect'],
    properties: {
      key: { type: 'string', minLength: 1, maxLength: 316 },
      value: { type: 'string', maxLength: 63 },
      effect: { enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] },
    },
  },
} as const;

const sshUser = { type: 'string', minLength: 1, maxLength: 32, pattern: '^[a-z_][a-z0-9_-]*\\$?$', description: 'The SSH user (default root).' } as const;
const sshPort = { type: 'integer', minimum: 1, maximum: 65535, description: 'The SSH port (default 22).' } as const;

/**
 * The inventory file (YAML or JSON), as a JSON Schema (draft-07): the API validates every file
 * against it, and `docs/inventory.schema.json` is this object, for editors.
 */
export const INVENTORY_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://ccos-scaler.io/schemas/inventory-v1.json',
  title: 'ccos-scaler inventory',
  description: 'The workers a cluster should have, for `ccos-scaler plan -f` and `ccos-scaler apply -f`. Hosts not named are left alone; `remove: true` takes one out.',
  type: 'object',
  additionalProperties: false,
  required: ['apiVersion', 'kind', 'cluster', 'hosts'],
  properties: {
    apiVersion: { const: INVENTORY_API_VERSION },
    kind: { const: INVENTORY_KIND },
    cluster: { type: 'string', minLength: 1, maxLength: 63, description: 'The registered cluster\'s name.' },
    defaults: {
      type: 'object',
      description: 'What every host takes unless it says otherwise.',
      additionalProperties: false,
      properties: { sshUser, sshPort, credential },
    },
    pools: {
      type: 'array',
      maxItems: 100,
      description: 'Node groups cluster-autoscaler (or an operator) scales from their spare hosts. Creating one needs an ADMIN.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'maxSize', 'profile'],
        properties: {
          name: { type: 'string', pattern: '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$', description: 'The id cluster-autoscaler knows the group by.' },
          minSize: { type: 'integer', minimum: 0, maximum: 5000 },
          maxSize: { type: 'integer', minimum: 0, maximum: 5000 },
          profile: {
            type: 'object',
            description: 'One node of the pool as cluster-autoscaler plans it; spares below its CPUs or memory are left out, each failed check named.',
            additionalProperties: false,
            required: ['cpuCores', 'memoryGiB'],
            properties: {
              cpuCores: { type: 'number', exclusiveMinimum: 0, maximum: 4096 },
              memoryGiB: { type: 'number', exclusiveMinimum: 0, maximum: 65536 },
              ephemeralStorageGiB: { type: 'number', minimum: 0, maximum: 1048576 },
              maxPods: { type: 'integer', minimum: 1, maximum: 10000 },
              arch: { enum: ['amd64', 'arm64'] },
            },
          },
          labels,
          taints,
        },
      },
    },
    hosts: {
      type: 'array',
      maxItems: 5000,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['hostname'],
        properties: {
          hostname: { type: 'string', minLength: 1, maxLength: 253, description: 'The node name: an RFC 1123 host name, lower case.' },
          ip: { type: 'string', minLength: 1, maxLength: 64, description: 'The address the service reaches the host at over SSH (required unless remove is true).' },
          sshPort,
          sshUser,
          credential,
          labels,
          taints,
          pool: { type: 'string', minLength: 1, maxLength: 63, description: 'The pool (node group) the host is a spare of: it takes the pool\'s labels and taints and is installed when the pool scales up.' },
          remove: { type: 'boolean', description: 'Take the host out of the cluster (cordon, PDB-safe drain, delete, clean the host).' },
        },
      },
    },
  },
} as const;
