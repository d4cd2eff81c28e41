export { AUDIT_ROUTES, USER_ROUTES } from './lib/users.routes';
