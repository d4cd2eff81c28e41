import { ChangeDetectionStrategy, Component, type ElementRef, input, output, viewChild } from '@angular/core';
import { FIELD_STYLES } from './field.styles';
import { TextControlDirective, provideValueAccessor } from './text-control.directive';

/**
 * A textarea for a file's text (a private key, a certificate) that can be pasted or read
 * from a local file. The file is read in the browser and put in the textarea; nothing is
 * uploaded until the form is sent. A file larger than `maxBytes` is refused (`fileRejected`).
 */
@Component({
  selector: 'ccos-file-text-field',
  changeDetection: ChangeDetectionStrategy.OnPush,
  providers: [provideValueAccessor(() => FileTextFieldComponent)],
  styles: [
    FIELD_STYLES,
    `
      .top { display: flex; flex-wrap: wrap; align-items: baseline; justify-content: space-between; gap: 0.5rem; }
      .pick { font: inherit; font-size: 0.875rem; padding: 0.25rem 0.65rem; border: 1px solid var(--ccos-border-strong); border-radius: var(--ccos-radius); background: var(--ccos-surface); cursor: pointer; }
      .pick:hover { background: var(--ccos-surface-muted); }
      input[type='file'] { display: none; }
    `,
  ],
  template: `
    <div class="top">
      <label class="label" [for]="id">{{ label() }}@if (required()) {<span class="required" aria-hidden="true">*</span>}</label>
      <button class="pick" type="button" [disabled]="isDisabled()" (click)="chooseFile()">{{ chooseLabel() }}</button>
      <input #file type="file" tabindex="-1" aria-hidden="true" [attr.accept]="accept() || null" (change)="readFile($event)" />
    </div>
    @if (hint()) {
      <p class="hint" [id]="hintId">{{ hint() }}</p>
    }
    <textarea
      #control
      class="control mono"
      [id]="id"
      [name]="name() || id"
      [rows]="rows()"
      [value]="value()"
      [required]="required()"
      [disabled]="isDisabled()"
      [attr.placeholder]="placeholder() || null"
      [attr.aria-invalid]="error() ? 'true' : null"
      [attr.aria-describedby]="describedBy()"
      autocomplete="off"
      spellcheck="false"
      (input)="typed($event)"
      (blur)="left()"
    ></textarea>
    @if (error()) {
      <p class="error" [id]="errorId">{{ error() }}</p>
    }
  `,
})
export class FileTextFieldComponent extends TextControlDirective {
  readonly chooseLabel = input.required<string>();
  readonly accept = input('');
  readonly rows = input(6);
  readonly maxBytes = input(64 * 1024);
  /** The chosen file was too large to be what the field expects. */
  readonly fileRejected = output<{ readonly name: string; readonly size: number }>();

  private readonly file = viewChild.required<ElementRef<HTMLInputElement>>('file');

  protected chooseFile(): void {
    this.file().nativeElement.click();
  }

  protected async readFile(event: Event): Promise<void> {
    const input = event.target as HTMLInputElement;
    const chosen = input.files?.[0];
    // Cleared so choosing the same file again reads it again.
    input.value = '';
    if (!chosen) {
      return;
    }
    if (chosen.size > this.maxBytes()) {
      this.fileRejected.emit({ name: chosen.name, size: chosen.size });
      return;
    }
    this.take(await chosen.text());
    this.focus();
  }
}
