import type { Routes } from '@angular/router';

/** Under `/clusters/:clusterId/csrs`: the certificate page (证书处理), its own lazy chunk. */
export const CSR_ROUTES: Routes = [{ path: '', loadComponent: () => import('./csrs.page').then((m) => m.CsrsPage) }];
