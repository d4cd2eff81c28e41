import type { Routes } from '@angular/router';

/** /account/…: the signed-in user's own password and sessions (every role). */
export const ACCOUNT_ROUTES: Routes = [
  { path: '', pathMatch: 'full', redirectTo: 'password' },
  { path: 'password', loadComponent: () => import('./change-password.page').then((m) => m.ChangePasswordPage) },
  { path: 'sessions', loadComponent: () => import('./my-sessions.page').then((m) => m.MySessionsPage) },
];
