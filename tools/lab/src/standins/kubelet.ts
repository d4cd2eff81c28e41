import './stdout-pipe';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { KubeClient } from '../kube/kube-client';
import { kubeconfigYaml, parseKubeconfig, type KubeConnection } from '../kube/kubeconfig';
import { hostNow, onHost, readFaults } from './host-state';
import { certificateNotAfter, certificateValidity } from './kubelet/certificates';
import { CLIENT_SIGNER, SERVING_SIGNER, obtainCertificate } from './kubelet/csr-requester';
import { error, info, warn } from './kubelet/klog';
import { KubeletFlagError, resolveOptions, type KubeletOptions } from './kubelet/kubelet-options';
import { KUBELET_VERSION, NodeStatusReporter } from './kubelet/node-status';
import { rotationDeadline, untilHostTime } from './kubelet/serving-rotation';

/**
 * The stand-in kubelet. It runs no pods; it joins the cluster exactly as a
 * kubelet does: TLS bootstrap with the bootstrap kubeconfig (client CSR,
 * wait for approval, write kubelet-client-current.pem and the kubeconfig),
 * register the Node with the client certificate, ask for a serving
 * certificate (and rotate it at 70–90 % of its validity, on the host's clock
 * the lab can move ahead), then heartbeat (Node status + Lease) until SIGTERM. A valid
 * client certificate from an earlier run skips the bootstrap.
 *
 * Lab knobs beyond real kubelet flags: `--lab-csr-timeout=30s` or
 * KUBELET_CSR_TIMEOUT (how long a CSR may stay pending before a new one is
 * made; real: 15m), KUBELET_READY_DELAY (seconds NotReady after
 * registering); defaults also come from the lab's per-host config.
 */
const USER_AGENT = `kubelet/${KUBELET_VERSION} (linux/amd64) kubernetes/lab`;

async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes('--version')) {
    process.stdout.write(`Kubernetes ${KUBELET_VERSION}\n`);
    return 0;
  }
  let options: KubeletOptions;
  try {
    options = resolveOptions(argv);
  } catch (cause) {
    if (cause instanceof KubeletFlagError) {
      error('server.go:177', 'Failed to validate kubelet flags', { err: cause.message });
      return 1;
    }
    throw cause;
  }
  info('server.go:413', 'Kubelet version', { kubeletVersion: KUBELET_VERSION });
  info('server.go:415', 'Golang settings', { GOGC: '', GOMAXPROCS: '', GOTRACEBACK: '' });
  if (options.failSwapOn && readFaults().swap) {
    error('run.go:74', 'command failed', {
      err: 'failed to run Kubelet: running with swap on is not supported, please disable swap! or set --fail-swap-on flag to false. /proc/swaps contained: [Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority /dev/dm-1                               partition\t4194300\t\t0\t\t-2]',
    });
    return 1;
  }
  const stop = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      info('kubelet.go:1532', 'Shutting down kubelet', { signal });
      stop.abort();
      process.exit(0);
    });
  }

  const connection = await clientConnection(options, stop.signal);
  if (connection === null) {
    return 1;
  }
  const client = new KubeClient(connection, USER_AGENT);
  const reporter = new NodeStatusReporter(client, options);
  await reporter.register(stop.signal);
  if (options.serverTlsBootstrap) {
    void manageServingCertificate(client, options, stop.signal);
  }
  await reporter.run(stop.signal);
  return 0;
}

/**
 * The connection with the node's client certificate: from an earlier run
 * when still valid, else by TLS bootstrap with the bootstrap kubeconfig.
 */
async function clientConnection(options: KubeletOptions, signal: AbortSignal): Promise<KubeConnection | null> {
  const certDir = onHost(options.certDir);
  const currentPem = join(certDir, 'kubelet-client-current.pem');
  const kubeconfigPath = onHost(options.kubeconfig);
  if (existsSync(kubeconfigPath) && existsSync(currentPem)) {
    const pem = readFileSync(currentPem, 'utf8');
    const notAfter = certificateNotAfter(pem);
    if (notAfter !== null && notAfter.getTime() > Date.now() + 60_000) {
      info('certificate_store.go:130', `Loading cert/key pair from "${join(options.certDir, 'kubelet-client-current.pem')}"`);
      const existing = parseKubeconfig(readFileSync(kubeconfigPath, 'utf8'), dirname(kubeconfigPath));
      return { ...existing, clientCertPem: pem, clientKeyPem: pem, token: undefined };
    }
    warn('bootstrap.go:85', 'Part of the existing bootstrap client certificate in /var/lib/kubelet/kubeconfig is expired', { expirationDate: notAfter?.toISOString() });
  }
  if (options.bootstrapKubeconfig === undefined) {
    if (existsSync(kubeconfigPath)) {
      return parseKubeconfig(readFileSync(kubeconfigPath, 'utf8'), dirname(kubeconfigPath));
    }
    error('run.go:74', 'command failed', { err: `failed to run Kubelet: invalid kubeconfig: stat ${options.kubeconfig}: no such file or directory` });
    return null;
  }
  const bootstrapPath = onHost(options.bootstrapKubeconfig);
  let bootstrap: KubeConnection;
  try {
    bootstrap = parseKubeconfig(readFileSync(bootstrapPath, 'utf8'), dirname(bootstrapPath));
  } catch (cause) {
    const reason = existsSync(bootstrapPath)
      ? (cause instanceof Error ? cause.message : String(cause))
      : `stat ${options.bootstrapKubeconfig}: no such file or directory`;
    error('run.go:74', 'command failed', { err: `failed to run Kubelet: unable to load bootstrap kubeconfig: ${reason}` });
    return null;
  }
  info('bootstrap.go:101', 'Using bootstrap kubeconfig to generate TLS client cert, key and kubeconfig file');
  const bootstrapClient = new KubeClient(bootstrap, USER_AGENT);
  const issued = await obtainCertificate(bootstrapClient, {
    signerName: CLIENT_SIGNER,
    nodeName: options.nodeName,
    sans: null,
    waitTimeoutSeconds: options.csrTimeoutSeconds,
  }, signal);
  bootstrapClient.close();
  const pem = `${issued.certificatePem.trim()}\n${issued.privateKeyPem.trim()}\n`;
  writeRotatedPem(options.certDir, 'kubelet-client', pem);
  mkdirSync(dirname(kubeconfigPath), { recursive: true });
  const currentOnHost = join(options.certDir, 'kubelet-client-current.pem');
  writeFileSync(kubeconfigPath, kubeconfigYaml({
    server: bootstrap.server,
    caPem: bootstrap.caPem,
    tlsServerName: bootstrap.tlsServerName,
    user: { clientCertificateFile: currentOnHost, clientKeyFile: currentOnHost },
    clusterName: 'default-cluster',
    userName: 'default-auth',
  }), { mode: 0o600 });
  info('bootstrap.go:136', 'Wrote kubeconfig with the client certificate', { path: options.kubeconfig });
  return { server: bootstrap.server, caPem: bootstrap.caPem, tlsServerName: bootstrap.tlsServerName, clientCertPem: pem, clientKeyPem: pem };
}

/**
 * The serving certificate manager: the first certificate, then a new CSR whenever 70–90 % of
 * the current one's validity has passed on the host's clock; the current certificate stays in
 * place until its successor is issued (kubelet-server-current.pem only moves then).
 */
async function manageServingCertificate(client: KubeClient, options: KubeletOptions, signal: AbortSignal): Promise<void> {
  try {
    for (let rotation = 0; ; rotation += 1) {
      const issued = await obtainCertificate(client, {
        signerName: SERVING_SIGNER,
        nodeName: options.nodeName,
        sans: { dns: [options.nodeName], ips: [options.nodeIp] },
        waitTimeoutSeconds: options.csrTimeoutSeconds,
        expirationSeconds: options.servingCertificateSeconds,
      }, signal);
      writeRotatedPem(options.certDir, 'kubelet-server', `${issued.certificatePem.trim()}\n${issued.privateKeyPem.trim()}\n`);
      const validity = certificateValidity(issued.certificatePem);
      if (validity === null) {
        error('certificate_manager.go:488', `${SERVING_SIGNER}: the issued certificate cannot be read; not rotating it`, { csr: issued.csrName });
        return;
      }
      const plan = rotationDeadline(validity, hostNow(), Date.now());
      info(
        'certificate_manager.go:270',
        rotation === 0 ? `${SERVING_SIGNER}: Certificate rotation is enabled and a serving certificate was issued` : `${SERVING_SIGNER}: Certificate rotated`,
        { csr: issued.csrName, expiration: validity.notAfter.toISOString(), rotationDeadline: new Date(plan.deadline).toISOString() },
      );
      await untilHostTime(plan.deadline, hostNow, signal);
      info('certificate_manager.go:356', `${SERVING_SIGNER}: Rotating certificates`, { expiration: validity.notAfter.toISOString() });
    }
  } catch (cause) {
    if (!signal.aborted) {
      error('certificate_manager.go:488', `${SERVING_SIGNER}: giving up`, { err: cause instanceof Error ? cause.message : String(cause) });
    }
  }
}

/**
 * Writes `<prefix>-YYYY-MM-DD-HH-MM-SS.pem` and points `<prefix>-current.pem`
 * at it (absolute link, as kubelet's certificate store does).
 */
function writeRotatedPem(certDir: string, prefix: string, pem: string): void {
  mkdirSync(onHost(certDir), { recursive: true, mode: 0o755 });
  const stamp = new Date().toISOString().replace(/\.\d+Z$/, '').replace(/[T:]/g, '-');
  const file = join(certDir, `${prefix}-${stamp}.pem`);
  writeFileSync(onHost(file), pem, { mode: 0o600 });
  const link = onHost(join(certDir, `${prefix}-current.pem`));
  rmSync(`${link}.tmp`, { force: true });
  symlinkSync(file, `${link}.tmp`);
  renameSync(`${link}.tmp`, link);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (cause: unknown) => {
    if (cause instanceof Error && cause.name === 'AbortError') {
      return;
    }
    error('run.go:74', 'command failed', { err: cause instanceof Error ? cause.message : String(cause) });
    process.exitCode = 1;
  },
);
