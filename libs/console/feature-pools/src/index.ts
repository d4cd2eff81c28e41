export { POOL_ROUTES } from './lib/pools.routes';
