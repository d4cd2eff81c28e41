import { randomInt } from 'node:crypto';
import type { FieldError } from '../api-error';
import { isJsonObject } from '../json-value';
import type { KubeObject } from '../kube-object';
import type { ResourceStrategy } from '../resource-definition';
import { STATUS_WRITE } from './status-subresource';

type ServicePort = Record<string, unknown>;

function portsOf(obj: KubeObject): ServicePort[] {
  const ports = obj.spec?.['ports'];
  return Array.isArray(ports) ? ports.filter(isJsonObject) : [];
}

/** A random address of the default service range 10.96.0.0/12, past 10.96.0.1 (the `kubernetes` Service's). */
function allocateClusterIp(): string {
  const offset = randomInt(2, 2 ** 20 - 1);
  return `10.${96 + (offset >> 16)}.${(offset >> 8) & 255}.${offset & 255}`;
}

function validateService(obj: KubeObject): FieldError[] {
  const spec = obj.spec ?? {};
  const type = spec['type'];
  const errors: FieldError[] = [];
  if (!['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'].includes(String(type))) {
    errors.push({ type: 'NotSupported', field: 'spec.type', value: type, detail: 'supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"' });
  }
  const ports = portsOf(obj);
  if (ports.length === 0 && type !== 'ExternalName' && spec['clusterIP'] !== 'None') {
    errors.push({ type: 'Required', field: 'spec.ports' });
  }
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const number = port['port'];
    if (typeof number !== 'number' || !Number.isInteger(number) || number < 1 || number > 65535) {
      errors.push({ type: 'Invalid', field: `spec.ports[${i}].port`, value: number, detail: 'must be between 1 and 65535, inclusive' });
    }
    const name = typeof port['name'] === 'string' ? port['name'] : '';
    if (ports.length > 1 && name === '') {
      errors.push({ type: 'Required', field: `spec.ports[${i}].name` });
    } else if (names.has(name)) {
      errors.push({ type: 'Duplicate', field: `spec.ports[${i}].name`, value: name });
    }
    names.add(name);
  });
  return errors;
}

/**
 * Service strategy: the defaults of pkg/apis/core/v1/defaults.go, a cluster IP from 10.96.0.0/12 and
 * node ports from 30000-32767 allocated on create (at random, as the allocators do; not checked for
 * collisions), both kept on update and the cluster IP immutable, status written through /status only.
 * Nothing routes traffic to the selected pods: there are no Endpoints, EndpointSlices or proxies.
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/registry/core/service/strategy.go
 */
export const SERVICE_STRATEGY: ResourceStrategy = {
  defaults(obj) {
    obj.spec ??= {};
    const spec = obj.spec;
    spec['type'] ??= 'ClusterIP';
    spec['sessionAffinity'] ??= 'None';
    if (spec['type'] !== 'ExternalName') {
      spec['internalTrafficPolicy'] ??= 'Cluster';
      spec['ipFamilies'] ??= ['IPv4'];
      spec['ipFamilyPolicy'] ??= 'SingleStack';
    }
    if (spec['type'] === 'NodePort' || spec['type'] === 'LoadBalancer') {
      spec['externalTrafficPolicy'] ??= 'Cluster';
    }
    for (const port of portsOf(obj)) {
      port['protocol'] ??= 'TCP';
      port['targetPort'] ??= port['port'];
    }
  },
  prepareForCreate(obj) {
    const spec = obj.spec ?? {};
    if (spec['type'] !== 'ExternalName' && (spec['clusterIP'] === undefined || spec['clusterIP'] === '')) {
      spec['clusterIP'] = allocateClusterIp();
    }
    if (spec['clusterIP'] !== undefined) {
      spec['clusterIPs'] ??= [spec['clusterIP']];
    }
    if (spec['type'] === 'NodePort' || spec['type'] === 'LoadBalancer') {
      for (const port of portsOf(obj)) {
        port['nodePort'] ??= randomInt(30000, 32768);
      }
    }
    obj.status = { loadBalancer: {} };
  },
  validateCreate: validateService,
  prepareForUpdate(obj, old) {
    const spec = obj.spec ?? {};
    for (const field of ['clusterIP', 'clusterIPs']) {
      const kept = old.spec?.[field];
      if (spec[field] === undefined && kept !== undefined) {
        spec[field] = kept;
      }
    }
    const oldPorts = new Map(portsOf(old).map((port) => [`${String(port['port'])}/${String(port['protocol'])}`, port['nodePort']]));
    if (spec['type'] === 'NodePort' || spec['type'] === 'LoadBalancer') {
      for (const port of portsOf(obj)) {
        port['nodePort'] ??= oldPorts.get(`${String(port['port'])}/${String(port['protocol'])}`) ?? randomInt(30000, 32768);
      }
    }
    obj.status = old.status;
  },
  validateUpdate(obj, old) {
    const errors = validateService(obj);
    if (old.spec?.['clusterIP'] !== undefined && obj.spec?.['clusterIP'] !== old.spec['clusterIP'] && obj.spec?.['type'] !== 'ExternalName') {
      errors.push({ type: 'Invalid', field: 'spec.clusterIPs[0]', value: obj.spec?.['clusterIP'], detail: 'may not change once set' });
    }
    return errors;
  },
  subresourceWrites: { status: STATUS_WRITE },
};
