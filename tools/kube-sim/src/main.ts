import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { startKubeSim } from './kube-sim';

const USAGE = `Usage: npm run kube-sim -- [options]

  --port N                 port to listen on (default 6443; 0 = any free port)
  --host ADDR              address to listen on (default 127.0.0.1)
  --insecure-http          serve plain HTTP instead of HTTPS
  --token-auth-file FILE   kube-apiserver static token file (token,user,uid,"g1,g2")
  --kubeconfig-out FILE    write an admin kubeconfig there
  --seed FILE.yaml         multi-document Kubernetes YAML to start with
  --state-dir DIR          keep the CA (ca.crt, ca.key) there across restarts
  --tls-san NAME|IP        extra serving-certificate SAN (repeatable)
  --bootstrap-token ID.SECRET  create this bootstrap token Secret (repeatable)
  --admin-token TOKEN      bearer token of the admin user (random by default)
  --no-admin               serve no system:masters credential at all (no admin
                           certificate or token); --kubeconfig-out then holds the
                           identity's kubeconfig (see below), or one without a user
  --identity-role FILE     ClusterRole/Role manifests to bind to an identity made at
                           start (repeatable); --kubeconfig-out gets its kubeconfig
  --identity-service-account NS/NAME  that identity as a ServiceAccount with a legacy
                           token (default default/kube-sim-identity)
  --identity-user NAME     that identity as a client-certificate user instead
  --identity-group GROUP   groups of --identity-user (repeatable)
  --admin-kubeconfig-out FILE  write the admin kubeconfig there
  --anonymous-auth         serve unauthenticated requests as system:anonymous
                           (default over --insecure-http without token auth)
  --watch-cache-size N     a fixed watch cache of N events per resource (default: adaptive,
                           100..102400 events, like kube-apiserver's)
  --workload-controllers   run the ReplicaSet and Deployment controllers and the scheduler
  --pod-startup-seconds N  pods bound to a Ready node become Running/Ready N s later
  --min-request-timeout S  watches without timeoutSeconds last S × rand[1,2) s (default 1800)
  --verbose                log every request to stderr
`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '6443' },
      host: { type: 'string', default: '127.0.0.1' },
      'insecure-http': { type: 'boolean', default: false },
      'token-auth-file': { type: 'string' },
      'kubeconfig-out': { type: 'string' },
      seed: { type: 'string' },
      'state-dir': { type: 'string' },
      'tls-san': { type: 'string', multiple: true },
      'bootstrap-token': { type: 'string', multiple: true },
      'admin-token': { type: 'string' },
      'no-admin': { type: 'boolean', default: false },
      'identity-role': { type: 'string', multiple: true },
      'identity-service-account': { type: 'string' },
      'identity-user': { type: 'string' },
      'identity-group': { type: 'string', multiple: true },
      'admin-kubeconfig-out': { type: 'string' },
      'anonymous-auth': { type: 'boolean' },
      'watch-cache-size': { type: 'string' },
      'workload-controllers': { type: 'boolean', default: false },
      'pod-startup-seconds': { type: 'string' },
      'min-request-timeout': { type: 'string' },
      verbose: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const serviceAccount = values['identity-service-account'];
  if (serviceAccount !== undefined && !/^[^/]+\/[^/]+$/.test(serviceAccount)) {
    throw new Error(`--identity-service-account must be NAMESPACE/NAME, not ${serviceAccount}`);
  }
  const wantsIdentity = (values['identity-role'] ?? []).length > 0 || serviceAccount !== undefined || values['identity-user'] !== undefined;
  const sim = await startKubeSim({
    port: Number(values.port),
    host: values.host,
    insecureHttp: values['insecure-http'],
    tokenAuthFile: values['token-auth-file'],
    kubeconfigOut: values['kubeconfig-out'],
    seed: values.seed ? await readFile(values.seed, 'utf8') : undefined,
    stateDir: values['state-dir'],
    tlsSans: values['tls-san'],
    adminToken: values['admin-token'],
    admin: !values['no-admin'],
    adminKubeconfigOut: values['admin-kubeconfig-out'],
    identity: wantsIdentity
      ? {
          roleFiles: values['identity-role'] ?? [],
          serviceAccount: serviceAccount ? { namespace: serviceAccount.split('/')[0], name: serviceAccount.split('/')[1] } : undefined,
          user: values['identity-user'] ? { name: values['identity-user'], groups: values['identity-group'] ?? [] } : undefined,
        }
      : undefined,
    anonymousAuth: values['anonymous-auth'],
    watchCacheSize: values['watch-cache-size'] ? Number(values['watch-cache-size']) : undefined,
    workloadControllers: values['workload-controllers'],
    podStartupSeconds: values['pod-startup-seconds'] ? Number(values['pod-startup-seconds']) : undefined,
    minRequestTimeoutSeconds: values['min-request-timeout'] ? Number(values['min-request-timeout']) : undefined,
    log: values.verbose ? (line) => process.stderr.write(`${line}\n`) : undefined,
  });
  for (const token of values['bootstrap-token'] ?? []) {
    const [id, secret] = token.split('.');
    // Like `kubeadm token create`: the token's extra group is the one kubeadm's bindings name.
    sim.createBootstrapToken({ id, secret, extraGroups: ['system:bootstrappers:kubeadm:default-node-token'] });
  }
  process.stdout.write(`${sim.url}\n`);
  process.stderr.write(`kube-sim: serving the Kubernetes API on ${sim.url}\n`);
  if (sim.kubeconfigPath) {
    process.stderr.write(`kube-sim: ${sim.identity ? `kubeconfig of ${sim.identity.username}` : sim.adminKubeconfig ? 'admin kubeconfig' : 'kubeconfig without credentials'} written to ${sim.kubeconfigPath}\n`);
  }
  if (sim.adminToken) {
    process.stderr.write(`kube-sim: admin bearer token ${sim.adminToken}\n`);
  }
  const shutdown = (): void => {
    void sim.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`kube-sim: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
