export { CSR_ROUTES } from './lib/csrs.routes';
