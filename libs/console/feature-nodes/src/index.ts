export { NODE_ROUTES } from './lib/nodes.routes';
