import type { Routes } from '@angular/router';
import { requireRole } from '@ccos/console/data-access';

/**
 * Under `/clusters/:clusterId/nodes`: the list, `new` (OPERATOR, 录入节点), `:nodeId` and
 * `:nodeId/remove` (OPERATOR, 移除节点), `bulk` (OPERATOR, 批量录入节点) and `batches/:batchId` —
 * each page its own lazy chunk.
 */
export const NODE_ROUTES: Routes = [
  { path: '', loadComponent: () => import('./node-list/node-list.page').then((m) => m.NodeListPage) },
  { path: 'new', canMatch: [requireRole('OPERATOR')], loadComponent: () => import('./add-node/add-node.page').then((m) => m.AddNodePage) },
  { path: 'bulk', canMatch: [requireRole('OPERATOR')], loadComponent: () => import('./bulk-add/bulk-add.page').then((m) => m.BulkAddPage) },
  { path: 'batches/:batchId', loadComponent: () => import('./batch/batch.page').then((m) => m.BatchPage) },
  { path: ':nodeId/remove', canMatch: [requireRole('OPERATOR')], loadComponent: () => import('./remove-node/remove-node.page').then((m) => m.RemoveNodePage) },
  { path: ':nodeId', loadComponent: () => import('./node-detail/node-detail.page').then((m) => m.NodeDetailPage) },
];
