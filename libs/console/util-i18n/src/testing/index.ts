export { FakeStorage, type FakeTab, fakeTab } from './fake-browser';
