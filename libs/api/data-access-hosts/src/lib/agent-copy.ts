import { type SshSession, SshError, canStreamCompressed, installCompressed, remoteSha256, uploadFile } from '@ccos/api/data-access-ssh';
import { AGENT_REMOTE_PATH, type AgentBinary } from './agent-binary';

/**
 * Copies the agent unless the host already has this exact executable: as a zstd stream through
 * one exec channel when the host can decompress it (a third of the bytes, and no SFTP, whose
 * per-request work in ssh2 made the copy the slowest link of a 20-host batch), else over SFTP.
 * Either way the host holds the file under its final name only once its sha256 equals
 * `agent.sha256`, which reaches the host over this authenticated session.
 */
export async function ensureAgent(session: SshSession, agent: AgentBinary): Promise<'copied' | 'streamed' | 'present'> {
  const present = await remoteSha256(session, AGENT_REMOTE_PATH).catch(() => null);
  if (present?.sha256 === agent.sha256) {
    return 'present';
  }
  const compressed = await agent.compressed?.();
  if (compressed && (await canStreamCompressed(session, compressed.codec))) {
    try {
      const installed = await installCompressed(session, { compressed: compressed.bytes, codec: compressed.codec, sha256: agent.sha256, size: agent.size, remotePath: AGENT_REMOTE_PATH, mode: 0o755 });
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
