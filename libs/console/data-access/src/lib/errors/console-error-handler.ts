import { type EnvironmentProviders, ErrorHandler, Injectable, Injector, inject, makeEnvironmentProviders } from '@angular/core';
import { ErrorReporter } from './error-reporter';

/** The app's one ErrorHandler: logs for developers, shows a toast for the user. */
@Injectable()
export class ConsoleErrorHandler implements ErrorHandler {
  // Resolved on first use: the ErrorHandler is created before most of the app.
  private readonly injector = inject(Injector);

  handleError(error: unknown): void {
    console.error(error);
    try {
      this.injector.get(ErrorReporter).reportUnexpected(error);
    } catch (reportFailure) {
      console.error('could not show the error', reportFailure);
    }
  }
}

export function provideConsoleErrorHandler(): EnvironmentProviders {
  return makeEnvironmentProviders([{ provide: ErrorHandler, useClass: ConsoleErrorHandler }]);
}
