import { ChangeDetectionStrategy, Component, ElementRef, inject, input, output, signal } from '@angular/core';
import { uniqueId } from './unique-id';

/**
 * The signed-in user's name and role behind a disclosure button, with the projected
 * account links and sign-out inside. Escape, a click elsewhere and following a link close it.
 */
@Component({
  selector: 'ccos-user-menu',
  changeDetection: ChangeDetectionStrategy.OnPush,
  host: { '(document:click)': 'closeWhenOutside($event)', '(keydown.escape)': 'closeAndFocusButton()', '(click)': 'closeAfterLink($event)' },
  styles: `
    :host { position: relative; display: inline-block; }
    .trigger {
      display: inline-flex; align-items: center; gap: 0.5rem; font: inherit; color: inherit; cursor: pointer;
      background: transparent; border: 1px solid rgb(255 255 255 / 35%); border-radius: var(--ccos-radius); padding: 0.3rem 0.65rem;
    }
    .trigger:hover { background: rgb(255 255 255 / 12%); }
    .avatar { display: inline-grid; place-items: center; width: 1.5rem; height: 1.5rem; border-radius: 50%; background: #3c6aa8; font-size: 0.8rem; font-weight: 700; text-transform: uppercase; }
    .caret { font-size: 0.7rem; }
    .panel {
      position: absolute; right: 0; top: calc(100% + 0.4rem); z-index: 20; min-width: 14rem; padding: 0.75rem;
      background: var(--ccos-surface); color: var(--ccos-text); border: 1px solid var(--ccos-border);
      border-radius: var(--ccos-radius); box-shadow: 0 8px 24px rgb(16 24 40 / 18%); display: flex; flex-direction: column; gap: 0.6rem;
    }
    .who { display: flex; flex-direction: column; gap: 0.1rem; padding-bottom: 0.6rem; border-bottom: 1px solid var(--ccos-border); }
    .name { font-weight: 600; overflow-wrap: anywhere; }
    .role { color: var(--ccos-text-muted); font-size: 0.875rem; }
    .sign-out { font: inherit; text-align: left; padding: 0.4rem 0.5rem; border: 0; background: none; cursor: pointer; border-radius: var(--ccos-radius); color: var(--ccos-danger); }
    .sign-out:hover { background: var(--ccos-danger-soft); }
    @media (max-width: 640px) { .username { display: none; } }
  `,
  template: `
    <!-- The name comes from the content, so that it holds the visible user name (WCAG 2.5.3, label in name). -->
    <button #trigger class="trigger" type="button" [attr.aria-expanded]="open()" [attr.aria-controls]="panelId" (click)="toggle()">
      <span class="avatar" aria-hidden="true">{{ username().charAt(0) }}</span>
      <span class="ccos-visually-hidden">{{ menuLabel() }}: </span>
      <span class="username">{{ username() }}</span>
      <span class="caret" aria-hidden="true">▾</span>
    </button>
    @if (open()) {
      <div class="panel" [id]="panelId">
        <div class="who">
          <span class="name">{{ username() }}</span>
          <span class="role">{{ roleLabel() }}</span>
        </div>
        <ng-content />
        <button class="sign-out" type="button" (click)="signOutRequested.emit()">{{ signOutLabel() }}</button>
      </div>
    }
  `,
})
export class UserMenuComponent {
  readonly username = input.required<string>();
  readonly roleLabel = input.required<string>();
  readonly menuLabel = input.required<string>();
  readonly signOutLabel = input.required<string>();
  readonly signOutRequested = output();

  protected readonly open = signal(false);
  protected readonly panelId = uniqueId('user-menu');
  private readonly host: ElementRef<HTMLElement> = inject(ElementRef);

  protected toggle(): void {
    this.open.update((open) => !open);
  }

  protected closeWhenOutside(event: MouseEvent): void {
    if (this.open() && !this.host.nativeElement.contains(event.target as Node)) {
      this.open.set(false);
    }
  }

  protected closeAfterLink(event: MouseEvent): void {
    if ((event.target as Element | null)?.closest('a')) {
      this.open.set(false);
    }
  }

  protected closeAndFocusButton(): void {
    if (this.open()) {
      this.open.set(false);
      this.host.nativeElement.querySelector<HTMLButtonElement>('.trigger')?.focus();
    }
  }
}
