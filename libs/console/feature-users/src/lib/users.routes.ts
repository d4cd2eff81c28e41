import type { Routes } from '@angular/router';

/** /users (the app guards it for ADMIN). */
export const USER_ROUTES: Routes = [{ path: '', loadComponent: () => import('./users.page').then((m) => m.UsersPage) }];

/** /audit (the app guards it for ADMIN). */
export const AUDIT_ROUTES: Routes = [{ path: '', loadComponent: () => import('./audit.page').then((m) => m.AuditPage) }];

/** /jobs (the app guards it for ADMIN). */
export const JOB_ROUTES: Routes = [{ path: '', loadComponent: () => import('./jobs.page').then((m) => m.JobsPage) }];
