/** Shared look of form fields (each field component includes it in its styles). */
export const FIELD_STYLES = `
:host { display: flex; flex-direction: column; gap: 0.3rem; }
.label { font-weight: 500; }
.required { color: var(--ccos-danger); margin-left: 0.15rem; }
.hint { color: var(--ccos-text-muted); font-size: 0.875rem; }
.error { color: var(--ccos-danger); font-size: 0.875rem; display: flex; gap: 0.35rem; align-items: baseline; overflow-wrap: anywhere; }
.error::before { content: '!'; display: inline-grid; place-items: center; flex: none; width: 1.1em; height: 1.1em; border-radius: 50%; background: var(--ccos-danger); color: #fff; font-size: 0.75em; font-weight: 700; }
.control {
  font: inherit; color: inherit; width: 100%; padding: 0.45rem 0.65rem; min-height: 2.4rem;
  border: 1px solid var(--ccos-border-strong); border-radius: var(--ccos-radius); background: var(--ccos-surface);
}
.control:focus { outline: none; border-color: var(--ccos-primary); box-shadow: var(--ccos-focus); }
.control[aria-invalid='true'] { border-color: var(--ccos-danger); }
.control:disabled { background: var(--ccos-surface-muted); }
textarea.control { resize: vertical; min-height: 6rem; }
.mono { font-family: var(--ccos-mono); font-size: 0.85rem; }
`;
