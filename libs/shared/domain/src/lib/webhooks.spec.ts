import { describe, expect, it } from 'vitest';
import { webhookEventType } from './webhooks';

describe('webhook event types', () => {
  it('names the changes operators subscribe to, and sends every other as node.changed', () => {
    expect(webhookEventType(null, 'ADDING')).toBe('node.added');
    expect(webhookEventType('READY_TO_INSTALL', 'INSTALLING')).toBe('install.started');
    expect(webhookEventType('INSTALL_FAILED', 'INSTALLING')).toBe('install.started');
    expect(webhookEventType('STALLED', 'INSTALLING')).toBe('node.changed');
    expect(webhookEventType('INSTALLING', 'JOINED')).toBe('install.joined');
    expect(webhookEventType('STALLED', 'JOINED')).toBe('install.joined');
    expect(webhookEventType('DRAIN_FAILED', 'JOINED')).toBe('node.changed');
    expect(webhookEventType('INSTALLING', 'INSTALL_FAILED')).toBe('install.failed');
    expect(webhookEventType('JOINED', 'REMOVING')).toBe('removal.started');
    expect(webhookEventType('REMOVING', 'REMOVED')).toBe('removal.done');
    expect(webhookEventType('REMOVING', 'DRAIN_FAILED')).toBe('removal.failed');
    expect(webhookEventType('ADDING', 'READY_TO_INSTALL')).toBe('node.changed');
  });
});
