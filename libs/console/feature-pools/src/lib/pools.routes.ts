import type { Routes } from '@angular/router';

/** Under `/clusters/:clusterId/pools`: node groups, their spare hosts and the autoscaler's decisions, its own lazy chunk. */
export const POOL_ROUTES: Routes = [{ path: '', loadComponent: () => import('./pools.page').then((m) => m.PoolsPage) }];
