import { inject } from '@angular/core';
import { type CanMatchFn, Router, type UrlSegment } from '@angular/router';
import type { Role } from '@ccos/shared/domain';
import { Session } from './session';

export const SIGN_IN_PATH = '/sign-in';

/** Routes behind sign-in: without a session, go to the sign-in page and come back afterwards. */
export const requireSignedIn: CanMatchFn = (_route, segments) => {
  if (inject(Session).signedIn()) {
    return true;
  }
  const returnUrl = pathOf(segments);
  return inject(Router).createUrlTree([SIGN_IN_PATH], { queryParams: returnUrl === '/' ? {} : { returnUrl } });
};

/** The sign-in page: a signed-in user goes to the console instead. */
export const requireSignedOut: CanMatchFn = () => (inject(Session).signedIn() ? inject(Router).createUrlTree(['/']) : true);

/** Routes for `role` and stronger; others land on the start page (their links are hidden anyway). */
export function requireRole(role: Role): CanMatchFn {
  return () => (inject(Session).allows(role) ? true : inject(Router).createUrlTree(['/']));
}

/** A return URL from a query string, only if it is a path inside the console (no open redirect). */
export function safeReturnUrl(value: string | null | undefined): string {
  return value && value.startsWith('/') && !value.startsWith('//') && !value.startsWith('/\\') && !value.startsWith(SIGN_IN_PATH) ? value : '/';
}

function pathOf(segments: readonly UrlSegment[]): string {
  return `/${segments.map((segment) => encodeURIComponent(segment.path)).join('/')}`;
}
