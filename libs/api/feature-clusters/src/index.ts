export * from './lib/cluster.resolver';
export * from './lib/cluster.service';
export * from './lib/cluster.type';
export * from './lib/cluster-credentials';
