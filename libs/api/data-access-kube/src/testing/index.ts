export * from './shipped-rbac';
export * from './kube-sim-fixture';
export * from './drain-seed';
