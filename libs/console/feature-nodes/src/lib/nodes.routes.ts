import type { Routes } from '@angular/router';
import { requireRole } from '@ccos/console/data-access';

/** Under `/clusters/:clusterId/nodes`: the list, `new` (OPERATOR, 录入节点) and `:nodeId` — each page its own lazy chunk. */
export const NODE_ROUTES: Routes = [
  { path: '', loadComponent: () => import('./node-list/node-list.page').then((m) => m.NodeListPage) },
  { path: 'new', canMatch: [requireRole('OPERATOR')], loadComponent: () => import('./add-node/add-node.page').then((m) => m.AddNodePage) },
  { path: ':nodeId', loadComponent: () => import('./node-detail/node-detail.page').then((m) => m.NodeDetailPage) },
];
