export { eventually } from './eventually';
export { FakeClock, settle } from './fake-clock';
