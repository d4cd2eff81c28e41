import type { Routes } from '@angular/router';
import { requireRole } from '@ccos/console/data-access';

/** /clusters, /clusters/new (ADMIN), /clusters/:clusterId — each page its own lazy chunk. */
export const CLUSTER_ROUTES: Routes = [
  { path: '', loadComponent: () => import('./cluster-list/cluster-list.page').then((m) => m.ClusterListPage) },
  { path: 'new', canMatch: [requireRole('ADMIN')], loadComponent: () => import('./register-cluster/register-cluster.page').then((m) => m.RegisterClusterPage) },
  { path: ':clusterId', loadComponent: () => import('./cluster-detail/cluster-detail.page').then((m) => m.ClusterDetailPage) },
];
