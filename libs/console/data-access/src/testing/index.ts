export { FakeApollo, FakeLiveConnection, type FakeRequest, type FakeSubscription, operationNameOf } from './fake-apollo';
export { type StoreUnderTest, storeUnderTest } from './store-test-bed';
export { installRun, stepEvent, stepSummary } from './install-fixtures';
export { removalEvent, removalRun } from './removal-fixtures';
