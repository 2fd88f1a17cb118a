/** What {@link parseKeyValueLines} found. */
export interface KeyValueLines {
  /** Variables in file order; a later line wins over an earlier one with the same name. */
  vars: Record<string, string>;
  /** Lines neither blank, nor a comment, nor `KEY=VALUE` (their numbers, 1-based; never their text). */
  skipped: number[];
}

const LINE_RE = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;

/**
 * Reads the `KEY=VALUE` lines of a file for `config-client run`: blank lines and `#` comments
 * are skipped, an `export ` prefix is allowed, the value is trimmed, and one pair of matching
 * single or double quotes around it is removed (inside double quotes `\n`, `\"` and `\\` are
 * unescaped; single quotes are literal). Nothing is expanded: the server already substituted
 * the file.
 */
export function parseKeyValueLines(text: string): KeyValueLines {
  const vars: Record<string, string> = {};
  const skipped: number[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const match = LINE_RE.exec(line);
    if (match === null) {
      skipped.push(index + 1);
      return;
    }
    let value = match[2]!.trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1).replace(/\\(["\\n])/g, (_m, c: string) => (c === 'n' ? '\n' : c));
    } else if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) {
      value = value.slice(1, -1);
    }
    vars[match[1]!] = value;
  });
  return { vars, skipped };
}
