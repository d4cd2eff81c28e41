export * from './bootstrap-identities-rbac';
export * from './kube-sim-fixture';
