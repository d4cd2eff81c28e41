import type { KubeObject } from '@ccos/tools/kube-sim';

/**
 * A typical Deployment pod as a kubeadm cluster serves it: managedFields, a projected
 * service-account volume, probes, env, status with conditions and container statuses. What the
 * API's pod cache holds per pod, for the rows that measure memory.
 */
export function samplePod(i: number, nodeName: string): KubeObject {
  const name = `web-7d9c6b5f4-${i.toString(36).padStart(5, '0')}`;
  const time = '2026-11-30T10:00:00Z';
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name,
      generateName: 'web-7d9c6b5f4-',
      namespace: 'shop',
      uid: `6f1d3c2e-${String(i).padStart(4, '0')}-4a5b-9c8d-7e6f5a4b3c2d`,
      resourceVersion: String(100000 + i),
      creationTimestamp: time,
      labels: { app: 'web', 'pod-template-hash': '7d9c6b5f4', 'app.kubernetes.io/part-of': 'shop' },
      annotations: { 'kubectl.kubernetes.io/restartedAt': time },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9c6b5f4', uid: '0a1b2c3d-1111-4222-8333-944455566677', controller: true, blockOwnerDeletion: true }],
      managedFields: [
        { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {} }, 'f:ownerReferences': { '.': {}, 'k:{"uid":"0a1b2c3d-1111-4222-8333-944455566677"}': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:imagePullPolicy': {}, 'f:name': {}, 'f:ports': {}, 'f:resources': {}, 'f:readinessProbe': {}, 'f:env': {} } }, 'f:dnsPolicy': {}, 'f:restartPolicy': {}, 'f:schedulerName': {}, 'f:securityContext': {}, 'f:terminationGracePeriodSeconds': {} } } },
        { manager: 'kubelet', operation: 'Update', apiVersion: 'v1', time, fieldsType: 'FieldsV1', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"ContainersReady"}': {}, 'k:{"type":"Initialized"}': {}, 'k:{"type":"PodReadyToStartContainers"}': {}, 'k:{"type":"Ready"}': {} }, 'f:containerStatuses': {}, 'f:hostIP': {}, 'f:hostIPs': {}, 'f:phase': {}, 'f:podIP': {}, 'f:podIPs': {}, 'f:startTime': {} } } },
      ],
    },
    spec: {
      volumes: [{ name: 'kube-api-access-x7k2p', projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }, { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } }], defaultMode: 420 } }],
      containers: [
        {
          name: 'web',
          image: 'registry.example.com/shop/web:1.42.0',
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [{ name: 'LOG_LEVEL', value: 'info' }, { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }],
          resources: { limits: { memory: '512Mi' }, requests: { cpu: '250m', memory: '256Mi' } },
          volumeMounts: [{ name: 'kube-api-access-x7k2p', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }],
          readinessProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      nodeName,
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: time })),
      hostIP: '10.0.0.11',
      hostIPs: [{ ip: '10.0.0.11' }],
      podIP: `10.244.1.${i % 250}`,
      podIPs: [{ ip: `10.244.1.${i % 250}` }],
      startTime: time,
      containerStatuses: [{ name: 'web', state: { running: { startedAt: time } }, lastState: {}, ready: true, restartCount: 0, image: 'registry.example.com/shop/web:1.42.0', imageID: 'registry.example.com/shop/web@sha256:4f1e9c0d2b3a4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5', containerID: `containerd://${'a'.repeat(64)}`, started: true }],
      qosClass: 'Burstable',
    },
  };
}
