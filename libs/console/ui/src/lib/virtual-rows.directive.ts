import { DestroyRef, Directive, ElementRef, afterEveryRender, computed, inject, input, signal } from '@angular/core';

/** Rows rendered beyond the visible ones on each side, so a fast scroll or Tab finds them there. */
const OVERSCAN = 12;
/** A row's height before one was measured (a table row with a badge, in px). */
const ESTIMATED_ROW_PX = 45;

/**
 * Renders only the visible rows of a long table: put it on the table's scroll container with
 * the number of rows, and render `rows.slice(win.start(), win.end())` between two spacer rows
 * of `win.before()` and `win.after()` pixels. The table keeps its markup (a real `<table>` with
 * its header, so screen readers keep table navigation); rows give `aria-rowindex` from
 * {@link start} and the table `aria-rowcount`, so the position in the whole list is announced.
 *
 * Up to `threshold` rows everything is rendered and nothing changes (no inner scrolling, the
 * browser's find finds every row). Rows are assumed about equally tall: the height is measured
 * from the rendered rows after each render, and the spacers use it.
 *
 * Scrolling runs the page's change detection once per scroll event (the browser sends at most
 * one a frame); with a few dozen rows rendered that is cheap, and it is the path Angular
 * guarantees to refresh the view.
 */
@Directive({
  selector: '[ccosVirtualRows]',
  exportAs: 'ccosVirtualRows',
  host: { '[class.ccos-virtual-rows]': 'active()', '[attr.tabindex]': 'active() ? 0 : null', '(scroll)': 'readViewport()' },
})
export class VirtualRowsDirective {
  /** How many rows the table has in all. */
  readonly total = input.required<number>({ alias: 'ccosVirtualRows' });
  /** Up to this many rows, all are rendered. */
  readonly threshold = input(150);

  private readonly host = inject<ElementRef<HTMLElement>>(ElementRef).nativeElement;
  private readonly scrollTop = signal(0);
  private readonly viewportHeight = signal(900);
  private readonly rowHeight = signal(ESTIMATED_ROW_PX);

  readonly active = computed(() => this.total() > this.threshold());
  /** Index of the first rendered row. */
  readonly start = computed(() => (this.active() ? Math.max(0, Math.min(this.total(), Math.floor(this.scrollTop() / this.rowHeight()) - OVERSCAN)) : 0));
  /** Index after the last rendered row. */
  readonly end = computed(() => (this.active() ? Math.min(this.total(), Math.ceil((this.scrollTop() + this.viewportHeight()) / this.rowHeight()) + OVERSCAN) : this.total()));
  /** Height of the spacer above the rendered rows, px. */
  readonly before = computed(() => this.start() * this.rowHeight());
  /** Height of the spacer below the rendered rows, px. */
  readonly after = computed(() => (this.total() - this.end()) * this.rowHeight());

  constructor() {
    const resize = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(() => this.readViewport());
    resize?.observe(this.host);
    inject(DestroyRef).onDestroy(() => {
      resize?.disconnect();
    });
    // After a render the rows' height may have changed the content's height, and the browser
    // may have clamped the scroll position without a scroll event: read both again.
    afterEveryRender({
      read: () => {
        this.measureRows();
        this.readViewport();
      },
    });
  }

  protected readViewport(): void {
    this.scrollTop.set(this.host.scrollTop);
    if (this.host.clientHeight > 0) {
      this.viewportHeight.set(this.host.clientHeight);
    }
  }

  /** The rendered rows' mean height (the spacers excluded), once they are laid out. */
  private measureRows(): void {
    if (!this.active()) {
      return;
    }
    const rows = this.host.querySelectorAll<HTMLElement>('tbody > tr:not([data-spacer])');
    const first = rows[0];
    const last = rows[rows.length - 1];
    if (!first || !last || rows.length < 2) {
      return;
    }
    const mean = (last.getBoundingClientRect().bottom - first.getBoundingClientRect().top) / rows.length;
    if (mean > 0 && Math.abs(mean - this.rowHeight()) > 0.5) {
      this.rowHeight.set(mean);
    }
  }
}
