export { AUDIT_ROUTES, JOB_ROUTES, USER_ROUTES } from './lib/users.routes';
