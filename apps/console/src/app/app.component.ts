import { ChangeDetectionStrategy, Component, effect, inject } from '@angular/core';
import { Title } from '@angular/platform-browser';
import { RouterOutlet } from '@angular/router';
import { Notifications } from '@ccos/console/data-access';
import { ToastsComponent } from '@ccos/console/ui';
import { I18n, commonMessages } from '@ccos/console/util-i18n';

/** The root: the routed page and the toasts above every page. */
@Component({
  selector: 'ccos-root',
  imports: [RouterOutlet, ToastsComponent],
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    <router-outlet />
    <ccos-toasts [toasts]="notifications.items()" [dismissLabel]="common('dismiss')" (dismissed)="notifications.dismiss($event)" />
  `,
})
export class AppComponent {
  protected readonly notifications = inject(Notifications);
  protected readonly common = inject(I18n).translator(commonMessages);

  constructor() {
    const title = inject(Title);
    effect(() => title.setTitle(this.common('productName')));
  }
}
