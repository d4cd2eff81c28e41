export { USER_ROUTES } from './lib/users.routes';
