import { describe, expect, it } from 'vitest';
import { FakeLiveConnection } from '../../testing';
import type { LiveConnection } from './live-connection';
import { onReconnect, retryDelayMs, webSocketUrl } from './live-connection';

describe('the live connection', () => {
  it('opens the socket on the page’s own host, encrypted when the page is', () => {
    expect(webSocketUrl({ protocol: 'https:', host: 'scaler.example:4000' }, '/graphql')).toBe('wss://scaler.example:4000/graphql');
    expect(webSocketUrl({ protocol: 'http:', host: '127.0.0.1:4000' }, '/graphql')).toBe('ws://127.0.0.1:4000/graphql');
  });

  it('waits longer after each failed reconnect, up to 30 s, never less than half of the step', () => {
    const lowest = () => 0;
    const highest = () => 0.999_999;
    expect([0, 1, 2, 3].map((retries) => Math.round(retryDelayMs(retries, highest)))).toEqual([1000, 2000, 4000, 8000]);
    expect(retryDelayMs(20, highest)).toBeLessThanOrEqual(30_000);
    expect(retryDelayMs(0, lowest)).toBeGreaterThanOrEqual(500);
    expect(retryDelayMs(20, lowest)).toBeGreaterThanOrEqual(15_000);
  });

  it('calls a store back when the socket comes up again, not for the first connection', () => {
    const connection = new FakeLiveConnection();
    connection.drop();
    let reloads = 0;
    const stop = onReconnect(connection as unknown as LiveConnection, () => (reloads += 1));
    connection.reconnect();
    expect(reloads).toBe(0);
    connection.drop();
    connection.reconnect();
    expect(reloads).toBe(1);
    stop();
    connection.drop();
    connection.reconnect();
    expect(reloads).toBe(1);
  });
});
