import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { IssueAutoscalerConnectionDocument } from '@ccos/shared/api-schema';
import { type CommandSpec, printJson, resolveCluster, stringFlag } from './command';
import { EXIT } from './exit-codes';

/**
 * `autoscaler connection`: issues the cluster's cluster-autoscaler a client certificate and prints
 * the cloud-config for --cloud-provider=externalgrpc; with --dir, writes tls.crt, tls.key (0600),
 * ca.crt and cloud-config there, the files of the Secret the Deployment in deploy/ mounts.
 */
export const AUTOSCALER_CONNECTION: CommandSpec = {
  options: { cluster: { type: 'string' }, dir: { type: 'string' } },
  positionals: [],
  async run(context) {
    const cluster = await resolveCluster(context);
    const { issueAutoscalerConnection: issued } = await context.api().request(IssueAutoscalerConnectionDocument, { clusterId: cluster.id });
    const dir = stringFlag(context, 'dir');
    if (dir) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeFile(join(dir, 'tls.key'), issued.clientKey, { mode: 0o600 });
      await writeFile(join(dir, 'tls.crt'), issued.clientCertificate, { mode: 0o644 });
      await writeFile(join(dir, 'ca.crt'), issued.caCertificate, { mode: 0o644 });
      await writeFile(join(dir, 'cloud-config'), issued.cloudConfig, { mode: 0o644 });
    }
    if (context.output !== 'table') {
      // The key only into the files, never onto the terminal.
      printJson(context, { address: issued.address, cloudConfig: issued.cloudConfig, caCertificate: issued.caCertificate, clientCertificate: issued.clientCertificate, files: dir ?? null });
      return EXIT.ok;
    }
    context.io.out(issued.cloudConfig);
    if (dir) {
      context.io.out(`# wrote ${join(dir, 'tls.crt')}, ${join(dir, 'tls.key')}, ${join(dir, 'ca.crt')}, ${join(dir, 'cloud-config')}`);
      context.io.out(`# kubectl -n kube-system create secret generic cluster-autoscaler-externalgrpc --from-file=${dir}`);
    } else {
      context.io.out('# the client key was not written anywhere: run again with --dir DIR to keep it');
    }
    return EXIT.ok;
  },
};
