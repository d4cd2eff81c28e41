import {
  type RemoteCheck, type RemoteChecksum, type SshSession, type StreamCodec, SshError, canStreamCompressed, installCompressed, remoteSha256, remoteSha256Check, runChecks,
  streamProbeCheck, uploadFile,
} from '@ccos/api/data-access-ssh';
import { AGENT_REMOTE_PATH, type AgentBinary } from './agent-binary';

/** The codec the service compresses the agent with (`AgentBinary.compressed`), probed for before it is known. */
const STREAM_CODEC: StreamCodec = 'zstd';

/** The sha256 of the agent on the host; null when it is not there (or cannot be read), 'no-tool' when the host cannot hash. */
function presentCheck(): RemoteCheck<RemoteChecksum | 'no-tool' | null> {
  const check = remoteSha256Check(AGENT_REMOTE_PATH);
  return {
    ...check,
    read(result, endpoint) {
      try {
        return check.read(result, endpoint) ?? 'no-tool';
      } catch {
        return null;
      }
    },
  };
}

/**
 * Copies the agent unless the host already has this exact executable: as a zstd stream through
 * one exec channel when the host can decompress it (a third of the bytes, and no SFTP, whose
 * per-request work in ssh2 made the copy the slowest link of a 20-host batch), else over SFTP.
 * Either way the host holds the file under its final name only once its sha256 equals
 * `agent.sha256`, which reaches the host over this authenticated session.
 */
export async function ensureAgent(session: SshSession, agent: AgentBinary): Promise<'copied' | 'streamed' | 'present'> {
  // One round trip asks both: is this executable there, and could a copy be streamed compressed.
  const [found, canStream] = await runChecks(session, [presentCheck(), streamProbeCheck(STREAM_CODEC)] as const, { sudo: session.sudo, timeoutMs: 300_000 })
    .catch(() => [null, null] as const);
  // A host with no hash tool: only reading the file back can tell.
  const present = found === 'no-tool' ? await remoteSha256(session, AGENT_REMOTE_PATH).catch(() => null) : found;
  if (present?.sha256 === agent.sha256) {
    return 'present';
  }
  const compressed = await agent.compressed?.();
  if (compressed && (compressed.codec === STREAM_CODEC && canStream !== null ? canStream : await canStreamCompressed(session, compressed.codec))) {
    try {
      const installed = await installCompressed(session, { compressed: { path: compressed.path, bytes: compressed.bytes }, codec: compressed.codec, sha256: agent.sha256, size: agent.size, remotePath: AGENT_REMOTE_PATH, mode: 0o755 });
      if (agent.copies) {
        agent.copies.streamed += 1;
        agent.copies.streamedBytes += installed.bytesSent;
      }
      return 'streamed';
    } catch (error) {
      // A copy that did not decompress to the executable: the compressed form is suspect, not the host.
      if (!(error instanceof SshError && error.kind === 'CHECKSUM_MISMATCH')) {
        throw error;
      }
      agent.dropCompressed?.();
    }
  }
  const uploaded = await uploadFile(session, { source: agent.path, remotePath: AGENT_REMOTE_PATH, mode: 0o755, sha256: agent.sha256 });
  if (agent.copies) {
    agent.copies.sftp += 1;
    agent.copies.sftpBytes += uploaded.bytes;
  }
  return 'copied';
}
