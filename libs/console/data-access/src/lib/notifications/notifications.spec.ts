import { TestBed } from '@angular/core/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Notifications } from './notifications';

const shown = () => TestBed.inject(Notifications).items().map((item) => `${item.tone}: ${item.title()}`);

describe('toasts', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets a success go after a few seconds, and keeps an error until it is dismissed', () => {
    const notifications = TestBed.inject(Notifications);
    notifications.show('success', 'Node added');
    notifications.show('error', 'Cluster unreachable');
    vi.advanceTimersByTime(5_999);
    expect(shown()).toEqual(['success: Node added', 'error: Cluster unreachable']);
    vi.advanceTimersByTime(1);
    expect(shown()).toEqual(['error: Cluster unreachable']);
    vi.advanceTimersByTime(3_600_000);
    expect(shown()).toEqual(['error: Cluster unreachable']);
    notifications.dismiss(notifications.items()[0]?.id ?? -1);
    expect(shown()).toEqual([]);
  });

  it('shows the same error from several operations once, and at most five at a time, the newest', () => {
    const notifications = TestBed.inject(Notifications);
    notifications.show('error', 'Cluster unreachable', 'prod did not answer');
    notifications.show('error', 'Cluster unreachable', 'prod did not answer');
    expect(shown()).toHaveLength(1);
    for (let index = 1; index <= 6; index += 1) {
      notifications.show('error', `Problem ${index}`);
    }
    expect(shown()).toEqual(['error: Problem 2', 'error: Problem 3', 'error: Problem 4', 'error: Problem 5', 'error: Problem 6']);
  });

  it('words an open toast in the language of the moment', () => {
    const notifications = TestBed.inject(Notifications);
    let language = 'en';
    notifications.show('info', () => (language === 'en' ? 'Saved' : '已保存'));
    language = 'zh';
    expect(shown()).toEqual(['info: 已保存']);
  });
});
