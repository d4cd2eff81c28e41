import { DOCUMENT } from '@angular/common';
import { Injectable, inject, signal } from '@angular/core';
import { type ApiProblem, type Outcome, type ProblemCode } from '../errors/api-problem';
import { ErrorReporter } from '../errors/error-reporter';
import { Session } from '../session/session';

const STATUS_CODES: Readonly<Record<number, ProblemCode>> = { 401: 'UNAUTHENTICATED', 403: 'FORBIDDEN', 404: 'NOT_FOUND' };

/**
 * Downloads a failed run's diagnostics bundle (`GET /api/install-runs/<id>/diagnostics.tar.gz`).
 * A plain link cannot carry the bearer token, so it is fetched and saved from a blob.
 * Failures are toasts.
 */
@Injectable({ providedIn: 'root' })
export class DiagnosticsDownload {
  private readonly document = inject(DOCUMENT);
  private readonly session = inject(Session);
  private readonly reporter = inject(ErrorReporter);
  private readonly active = signal<ReadonlySet<string>>(new Set());

  isDownloading(url: string): boolean {
    return this.active().has(url);
  }

  async download(url: string, fallbackName: string): Promise<Outcome<void>> {
    this.active.update((urls) => new Set(urls).add(url));
    try {
      const token = this.session.token();
      const response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
      if (!response.ok) {
        return this.failed(new Error(`HTTP ${response.status}`), { code: STATUS_CODES[response.status] ?? 'UNAVAILABLE', message: await errorText(response), field: null });
      }
      const blob = await response.blob();
      this.save(blob, fileNameOf(response.headers.get('content-disposition')) ?? fallbackName);
      return { ok: true, value: undefined };
    } catch (error) {
      return this.failed(error, { code: 'NETWORK', message: '', field: null });
    } finally {
      this.active.update((urls) => {
        const next = new Set(urls);
        next.delete(url);
        return next;
      });
    }
  }

  private save(blob: Blob, fileName: string): void {
    const view = this.document.defaultView;
    if (!view) {
      return;
    }
    const href = view.URL.createObjectURL(blob);
    const link = this.document.createElement('a');
    link.href = href;
    link.download = fileName;
    link.rel = 'noopener';
    this.document.body.appendChild(link);
    link.click();
    link.remove();
    // The browser has taken the data once the click is handled.
    view.setTimeout(() => view.URL.revokeObjectURL(href), 30_000);
  }

  private failed(error: unknown, problem: ApiProblem): Outcome<void> {
    this.reporter.reportApiError(error, 'toast', [problem]);
    return { ok: false, problems: [problem] };
  }
}

async function errorText(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { error?: unknown };
    return typeof body.error === 'string' ? body.error : `HTTP ${response.status}`;
  } catch {
    return `HTTP ${response.status}`;
  }
}

/** The file name of `attachment; filename="…"`, if it is a plain one. */
export function fileNameOf(disposition: string | null): string | null {
  const name = /filename="([^"/\\]+)"/.exec(disposition ?? '')?.[1];
  return name ?? null;
}
