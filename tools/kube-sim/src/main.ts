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
  --anonymous-auth         serve unauthenticated requests as system:anonymous
                           (default over --insecure-http without token auth)
  --watch-cache-size N     events kept per resource for watch resumption (default 5000)
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
      'anonymous-auth': { type: 'boolean' },
      'watch-cache-size': { type: 'string' },
      verbose: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
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
    anonymousAuth: values['anonymous-auth'],
    watchCacheSize: values['watch-cache-size'] ? Number(values['watch-cache-size']) : undefined,
    log: values.verbose ? (line) => process.stderr.write(`${line}\n`) : undefined,
  });
  for (const token of values['bootstrap-token'] ?? []) {
    const [id, secret] = token.split('.');
    sim.createBootstrapToken({ id, secret });
  }
  process.stdout.write(`${sim.url}\n`);
  process.stderr.write(`kube-sim: serving the Kubernetes API on ${sim.url}\n`);
  if (sim.kubeconfigPath) {
    process.stderr.write(`kube-sim: admin kubeconfig written to ${sim.kubeconfigPath}\n`);
  }
  process.stderr.write(`kube-sim: admin bearer token ${sim.adminToken}\n`);
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
