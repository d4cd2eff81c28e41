import { describe, expect, it } from 'vitest';
import { quoteCommand, quoteShellArg, ShellQuoteError } from './shell-quote';

/**
 * What a POSIX shell does with our output: inside '...' nothing is special,
 * `\'` outside quotes is a literal quote, an unquoted blank ends a word.
 * Enough of sh(1) to prove the round trip for lines made only of those.
 */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let index = 0;
  while (index < line.length) {
    if (line[index] === "'") {
      const end = line.indexOf("'", index + 1);
      expect(end).toBeGreaterThan(index);
      word = (word ?? '') + line.slice(index + 1, end);
      index = end + 1;
    } else if (line.startsWith("\\'", index)) {
      word = `${word ?? ''}'`;
      index += 2;
    } else if (line[index] === ' ') {
      if (word !== null) {
        words.push(word);
      }
      word = null;
      index += 1;
    } else {
      throw new Error(`unquoted character ${JSON.stringify(line[index])} at ${index} in ${line}`);
    }
  }
  if (word !== null) {
    words.push(word);
  }
  return words;
}

describe('quoteShellArg', () => {
  it.each([
    ['plain word', 'hello', "'hello'"],
    ['empty string', '', "''"],
    ['spaces', 'a b  c', "'a b  c'"],
    ['single quote', "it's", "'it'\\''s'"],
    ['only quotes', "''", "''\\'''\\'''"],
    ['double quotes', 'say "hi"', `'say "hi"'`],
    ['command substitution', '$(touch /tmp/pwned)', "'$(touch /tmp/pwned)'"],
    ['backticks', '`id`', "'`id`'"],
    ['variable', '$HOME ${PATH}', "'$HOME ${PATH}'"],
    ['semicolon', '; touch /tmp/pwned2', "'; touch /tmp/pwned2'"],
    ['pipes and redirects', 'a | b > c && d || e &', "'a | b > c && d || e &'"],
    ['newline', 'line1\nline2; rm -rf /', "'line1\nline2; rm -rf /'"],
    ['glob', '*.conf ?[a-z]', "'*.conf ?[a-z]'"],
    ['tilde', '~root', "'~root'"],
    ['backslash', 'a\\nb\\', "'a\\nb\\'"],
    ['unicode', 'Grüße ✓ 日本', "'Grüße ✓ 日本'"],
    ['leading dash', '-rf', "'-rf'"],
    ['hash', '# not a comment', "'# not a comment'"],
    ['quote then substitution', "'$(id)'", "''\\''$(id)'\\'''"],
  ])('%s', (_name, input, expected) => {
    const quoted = quoteShellArg(input);
    expect(quoted).toBe(expected);
    expect(shellWords(quoted)).toEqual([input]);
  });

  it('refuses NUL, naming the position but not the value', () => {
    expect(() => quoteShellArg('secret\0value', 3)).toThrow(ShellQuoteError);
    expect(() => quoteShellArg('secret\0value', 3)).toThrow(/argument 3 contains a NUL byte/);
    try {
      quoteShellArg('secret\0value', 3);
    } catch (error) {
      expect(String(error)).not.toContain('secret');
    }
  });

  it('refuses a non-string at run time', () => {
    expect(() => quoteShellArg(42 as unknown as string, 1)).toThrow(/argument 1 is a number/);
  });
});

describe('quoteCommand', () => {
  it('quotes every element and joins with one space', () => {
    expect(quoteCommand(['echo', 'a b', "c'd", ''])).toBe("'echo' 'a b' 'c'\\''d' ''");
  });

  it('keeps the argument count, whatever the content', () => {
    const argv = ['printf', '%s\\n', '$(touch /tmp/pwned)', '; touch /tmp/pwned2', '`id`', 'a\nb', "'", ''];
    expect(shellWords(quoteCommand(argv))).toEqual(argv);
  });

  it('needs a program name', () => {
    expect(() => quoteCommand([])).toThrow(/at least the program name/);
    expect(() => quoteCommand(['', 'x'])).toThrow(/program name \(argument 0\) is empty/);
    expect(() => quoteCommand(['ls', 'a\0b'])).toThrow(/argument 1 contains a NUL byte/);
  });
});
