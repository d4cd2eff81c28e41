export { FakeApiClient, unauthenticated, unreachable } from './fake-api-client';
