import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing';
import { AGENT_TOKEN_GRACE_MS, AgentTokens } from './agent-tokens';
import { openDatabase } from './data-source';
import { InstallRunEntity } from './entities/install-run.entity';

describe('agent tokens', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let now = new Date('2026-12-01T10:00:00Z');
  let tokens: AgentTokens;
  let nodeId: string;

  beforeAll(async () => {
    database = await createTestDatabase('ccos_agent_tokens');
    dataSource = await openDatabase({ url: database.url });
    tokens = new AgentTokens(dataSource, () => now);
    const clusterId = randomUUID();
    nodeId = randomUUID();
    await dataSource.query(`INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind) VALUES ($1, 'c', 'https://k:6443', '198.18.0.2', 's', 'TOKEN')`, [clusterId]);
    await dataSource.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, 'w1', '198.18.0.11', 'STALLED')`, [nodeId, clusterId]);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  /** A run that started now with a deadline `minutes` away, its token expiring with it. */
  const runWithDeadline = async (minutes: number, overrides: Partial<InstallRunEntity> = {}): Promise<{ token: string; run: InstallRunEntity }> => {
    const { token, hash } = tokens.issue();
    const deadline = new Date(now.getTime() + minutes * 60_000);
    const run = await dataSource.getRepository(InstallRunEntity).save({
      id: randomUUID(), nodeId, status: 'RUNNING' as const, requestedBy: 'operator', agentTokenHash: hash, deadlineAt: deadline, agentTokenExpiresAt: deadline, ...overrides,
    });
    return { token, run };
  };

  it('works until the run\'s deadline, stalled or not, and not a moment longer', async () => {
    const { token, run } = await runWithDeadline(120);
    expect((await tokens.authenticate(token))?.id).toBe(run.id);
    const start = now;
    now = new Date(start.getTime() + 120 * 60_000 - 1);
    expect((await tokens.authenticate(token))?.id).toBe(run.id);
    now = new Date(start.getTime() + 120 * 60_000);
    expect(await tokens.authenticate(token)).toBeNull();
    now = start;
  });

  it('refuses a token whose run has no expiry at all (the old "never expires")', async () => {
    const { token } = await runWithDeadline(120, { agentTokenExpiresAt: null });
    expect(await tokens.authenticate(token)).toBeNull();
  });

  it('keeps a grace after the run ended, but never past the deadline', () => {
    const ended = new Date('2026-12-01T11:00:00Z');
    expect(AgentTokens.expiryAfterEnd(ended, new Date('2026-12-01T12:00:00Z'))).toEqual(new Date(ended.getTime() + AGENT_TOKEN_GRACE_MS));
    expect(AgentTokens.expiryAfterEnd(ended, new Date('2026-12-01T11:01:00Z'))).toEqual(new Date('2026-12-01T11:01:00Z'));
  });

  it('refuses garbage and revoked tokens', async () => {
    const { token } = await runWithDeadline(120);
    expect(await tokens.authenticate('agt_not-a-token')).toBeNull();
    expect(await tokens.authenticate(`${token}x`)).toBeNull();
    await tokens.revokeForNode(nodeId);
    expect(await tokens.authenticate(token)).toBeNull();
  });
});
