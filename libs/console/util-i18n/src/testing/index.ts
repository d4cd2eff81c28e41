export { FakeBrowser, type FakeTab, fakeTab } from './fake-browser';
