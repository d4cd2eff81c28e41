import type { Routes } from '@angular/router';

/** Under `/clusters/:clusterId/inventory`: plan and apply an inventory file, its own lazy chunk. */
export const INVENTORY_ROUTES: Routes = [{ path: '', loadComponent: () => import('./inventory.page').then((m) => m.InventoryPage) }];
