export { FakeClock, settle } from '@ccos/shared/util-timing/testing';
export { FakeExecutor, ok, failed, type FakeReply } from './fake-executor';
export { FakeHttp, requestHeader, type FakeHttpReply } from './fake-http';
export { FakeNetwork } from './fake-network';
export { FakeSystemInfo } from './fake-system-info';
export { MemoryFileSystem } from './memory-file-system';
export { MemoryLogger } from './memory-logger';
export { testCertificate, type TestCertificate } from './test-certificates';
