// Time and retry pacing are shared with the service (libs/shared/util-timing); the agent's code imports them from here.
export { Backoff, DOWNLOAD_BACKOFF, EVENT_BACKOFF, SystemClock, type BackoffPolicy, type Clock } from '@ccos/shared/util-timing';
export {
  MAX_CAPTURED_BYTES, NodeExecutor, describeExit, exitMessage, formatCommand, succeeded,
  type CommandResult, type Executor, type RunOptions,
} from './lib/executor';
export { NodeFileSystem, sha256Of, type FileSink, type FileSystem, type PathInfo, type WriteOptions } from './lib/file-system';
export { HttpError, NodeHttp, isTlsErrorCode, readBody, type Http, type HttpRequest, type HttpResponse } from './lib/http';
export { CERT_NOT_PINNED, publicKeySha256, type TlsPin } from './lib/tls-pin';
export { isJsonObject, type JsonObject, type JsonPrimitive, type JsonValue } from './lib/json';
export { FileLogger, formatLogLine, type LogLevel, type Logger } from './lib/logger';
export { NodeNetwork, type Network, type TcpProbe } from './lib/network';
export { OUTPUT_TAIL_BYTES, headText, quoteForMessage, tailText } from './lib/output-tail';
export { NodeSystemInfo, type SystemInfo } from './lib/system-info';
export { createTar, createTarGz, type TarEntry } from './lib/tar';
