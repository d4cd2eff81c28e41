// Setup of vitest's `console` project: the console's specs run in Node, with Angular's JIT
// compiler (the sources are not AOT-compiled there) and TestBed for the few that need injection.
import '@angular/compiler';
import { TestBed } from '@angular/core/testing';
import { BrowserTestingModule, platformBrowserTesting } from '@angular/platform-browser/testing';
import { afterEach } from 'vitest';

TestBed.initTestEnvironment(BrowserTestingModule, platformBrowserTesting(), { teardown: { destroyAfterEach: true } });
// Angular resets TestBed by itself only where the test framework's hooks are globals (Jasmine, Jest);
// vitest's are imported. Destroying the module ends the stores' subscriptions as a page leaving does.
afterEach(() => {
  TestBed.resetTestingModule();
});
