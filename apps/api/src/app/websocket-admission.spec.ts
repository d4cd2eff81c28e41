import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { AuthenticatedUser } from '@ccos/api/util-graphql';
import { WEBSOCKET_CLOSE_CODES, type WebSocketLimitName, WebSocketAdmission } from './websocket-admission';

const LIMITS = { connectionsPerSession: 2, connectionsPerUser: 3, connectionsPerProcess: 6, subscriptionsPerConnection: 4 };

const user = (id: string, sessionId: string): AuthenticatedUser => ({ id, username: id, role: 'VIEWER', sessionId }) as AuthenticatedUser;

describe('WebSocketAdmission', () => {
  it('refuses past the session, user and process limits, counts each refusal, and takes counts back on close', () => {
    const refused: WebSocketLimitName[] = [];
    const admission = new WebSocketAdmission(LIMITS, (limit) => refused.push(limit));
    const connect = (who: AuthenticatedUser) => {
      const socket = new EventEmitter();
      return { socket, refusal: admission.admitSocket(socket) ?? admission.admitUser(who, socket) };
    };
    const a1 = connect(user('a', 'a1'));
    connect(user('a', 'a1'));
    expect(connect(user('a', 'a1')).refusal?.code).toBe(WEBSOCKET_CLOSE_CODES.sessionConnections);
    connect(user('a', 'a2'));
    expect(connect(user('a', 'a3')).refusal?.code).toBe(WEBSOCKET_CLOSE_CODES.userConnections);
    connect(user('b', 'b1'));
    // Refused connections hold a socket until they close: six are open, four of them admitted.
    expect(connect(user('c', 'c1')).refusal?.code).toBe(WEBSOCKET_CLOSE_CODES.processConnections);
    expect(refused).toEqual(['session', 'user', 'process']);

    a1.socket.emit('close');
    expect(admission.connections).toBe(6 - 1);
    expect(connect(user('a', 'a1')).refusal).toBeNull();
  });
});
