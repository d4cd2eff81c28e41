import { Pipe, type PipeTransform, inject } from '@angular/core';
import { I18n } from './i18n';

/**
 * A text the server produced, in the current language:
 * `{{ node.statusReason | serverText: node.statusReasonCode : node.statusReasonParams }}`.
 * The code and parameters come from the message catalogue (libs/shared/messages); without a
 * known code the server's own text is shown. Impure, so it follows a language switch.
 */
@Pipe({ name: 'serverText', pure: false })
export class ServerTextPipe implements PipeTransform {
  private readonly i18n = inject(I18n);

  transform(fallback: string | null | undefined, code?: string | null, params?: unknown): string {
    return this.i18n.server(code, params, fallback);
  }
}
