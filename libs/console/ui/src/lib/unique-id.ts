let counter = 0;

/** An id unique in this page, to tie labels, hints and errors to their control. */
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}`;
}
