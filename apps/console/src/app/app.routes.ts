import type { Routes } from '@angular/router';
import { requireRole, requireSignedIn, requireSignedOut } from '@ccos/console/data-access';

/**
 * Each feature is its own lazy chunk. New features add a child route under the shell here
 * and a link in the shell's navigation.
 */
export const routes: Routes = [
  { path: 'sign-in', canMatch: [requireSignedOut], loadComponent: () => import('@ccos/console/feature-auth').then((m) => m.SignInPage) },
  {
    path: '',
    canMatch: [requireSignedIn],
    loadComponent: () => import('@ccos/console/feature-shell').then((m) => m.ShellComponent),
    children: [
      { path: '', pathMatch: 'full', redirectTo: 'clusters' },
      // Per-cluster pages first, so `clusters/:clusterId` below only matches the cluster page itself.
      { path: 'clusters/:clusterId/nodes', loadChildren: () => import('@ccos/console/feature-nodes').then((m) => m.NODE_ROUTES) },
      { path: 'clusters/:clusterId/csrs', loadChildren: () => import('@ccos/console/feature-csrs').then((m) => m.CSR_ROUTES) },
      { path: 'clusters/:clusterId/pools', loadChildren: () => import('@ccos/console/feature-pools').then((m) => m.POOL_ROUTES) },
      { path: 'clusters/:clusterId/inventory', loadChildren: () => import('@ccos/console/feature-inventory').then((m) => m.INVENTORY_ROUTES) },
      { path: 'clusters', loadChildren: () => import('@ccos/console/feature-clusters').then((m) => m.CLUSTER_ROUTES) },
      { path: 'account', loadChildren: () => import('@ccos/console/feature-auth').then((m) => m.ACCOUNT_ROUTES) },
      { path: 'users', canMatch: [requireRole('ADMIN')], loadChildren: () => import('@ccos/console/feature-users').then((m) => m.USER_ROUTES) },
      { path: 'audit', canMatch: [requireRole('ADMIN')], loadChildren: () => import('@ccos/console/feature-users').then((m) => m.AUDIT_ROUTES) },
      { path: 'jobs', canMatch: [requireRole('ADMIN')], loadChildren: () => import('@ccos/console/feature-users').then((m) => m.JOB_ROUTES) },
      { path: '**', redirectTo: 'clusters' },
    ],
  },
  { path: '**', redirectTo: 'sign-in' },
];
