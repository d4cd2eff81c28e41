export { CLUSTER_ROUTES } from './lib/clusters.routes';
