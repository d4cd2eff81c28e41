export { FakeClock, settle } from './fake-clock';
