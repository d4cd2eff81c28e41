// Setup of vitest's `console` project: the console's specs run in Node, with Angular's JIT
// compiler (the sources are not AOT-compiled there) and TestBed for the few that need injection.
import '@angular/compiler';
import { DOCUMENT } from '@angular/common';
import { TestBed } from '@angular/core/testing';
import { BrowserTestingModule, platformBrowserTesting } from '@angular/platform-browser/testing';
import { afterEach, beforeEach } from 'vitest';
import { fakeTab } from './fake-browser';

TestBed.initTestEnvironment(BrowserTestingModule, platformBrowserTesting(), { teardown: { destroyAfterEach: true } });
// Node has no document; each test gets a tab of its own (a spec may configure another one).
beforeEach(() => {
  TestBed.configureTestingModule({ providers: [{ provide: DOCUMENT, useValue: fakeTab().document }] });
});
// Angular resets TestBed by itself only where the test framework's hooks are globals (Jasmine, Jest);
// vitest's are imported. Destroying the module ends the stores' subscriptions as a page leaving does.
afterEach(() => {
  TestBed.resetTestingModule();
});
