export { ShellComponent } from './lib/shell.component';
