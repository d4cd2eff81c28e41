import { ChangeDetectionStrategy, Component, type ElementRef, booleanAttribute, computed, forwardRef, input, model, output, viewChild } from '@angular/core';
import { type ControlValueAccessor, NG_VALUE_ACCESSOR } from '@angular/forms';
import { uniqueId } from '../unique-id';
import { FIELD_STYLES } from './field.styles';

/**
 * A textarea for a file's text (a private key, a certificate) that can be pasted or read
 * from a local file. The file is read in the browser and put in the textarea; nothing is
 * uploaded until the form is sent. A file larger than `maxBytes` is refused (`fileRejected`).
 */
@Component({
  selector: 'ccos-file-text-field',
  changeDetection: ChangeDetectionStrategy.OnPush,
  providers: [{ provide: NG_VALUE_ACCESSOR, useExisting: forwardRef(() => FileTextFieldComponent), multi: true }],
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
      <button class="pick" type="button" (click)="chooseFile()">{{ chooseLabel() }}</button>
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
      [attr.placeholder]="placeholder() || null"
      [attr.aria-invalid]="error() ? 'true' : null"
      [attr.aria-describedby]="describedBy()"
      autocomplete="off"
      spellcheck="false"
      (input)="take(textOf($event))"
      (blur)="left()"
    ></textarea>
    @if (error()) {
      <p class="error" [id]="errorId">{{ error() }}</p>
    }
  `,
})
export class FileTextFieldComponent implements ControlValueAccessor {
  readonly label = input.required<string>();
  readonly chooseLabel = input.required<string>();
  readonly value = model('');
  readonly name = input('');
  readonly hint = input<string | null>(null);
  readonly error = input<string | null>(null);
  readonly placeholder = input('');
  readonly accept = input('');
  readonly rows = input(6);
  readonly maxBytes = input(64 * 1024);
  readonly required = input(false, { transform: booleanAttribute });
  readonly blurred = output();
  /** The chosen file was too large to be what the field expects. */
  readonly fileRejected = output<{ readonly name: string; readonly size: number }>();

  protected readonly id = uniqueId('file-text');
  protected readonly hintId = `${this.id}-hint`;
  protected readonly errorId = `${this.id}-error`;
  protected readonly describedBy = computed(() => [this.hint() ? this.hintId : '', this.error() ? this.errorId : ''].filter(Boolean).join(' ') || null);
  private readonly file = viewChild.required<ElementRef<HTMLInputElement>>('file');
  private readonly control = viewChild.required<ElementRef<HTMLTextAreaElement>>('control');

  private changed: (value: string) => void = () => undefined;
  private touched: () => void = () => undefined;

  focus(): void {
    this.control().nativeElement.focus();
  }

  writeValue(value: string | null): void {
    this.value.set(value ?? '');
  }

  registerOnChange(changed: (value: string) => void): void {
    this.changed = changed;
  }

  registerOnTouched(touched: () => void): void {
    this.touched = touched;
  }

  /** Typed or read from a file: the field's value, and its form control's when it has one. */
  protected take(text: string): void {
    this.value.set(text);
    this.changed(text);
  }

  protected left(): void {
    this.touched();
    this.blurred.emit();
  }

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
    this.control().nativeElement.focus();
  }

  protected textOf(event: Event): string {
    return (event.target as HTMLTextAreaElement).value;
  }
}
