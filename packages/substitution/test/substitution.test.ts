import { parseEnv, resolvedLength, resolveEnv, substitute, SubstitutionLimitError, type ResolveOptions } from '../src';

function render(envText: string, fileText: string, options: ResolveOptions & { maxOutputLength?: number } = {}) {
  const parsed = parseEnv(envText);
  const env = resolveEnv(parsed.entries, options);
  return { ...substitute(fileText, env, options), env, parsed };
}

function chain(length: number): string {
  // V1=$V2, V2=$V3, ..., V<length>=end: resolving V1 takes `length` levels.
  const lines = [];
  for (let i = 1; i < length; i++) lines.push(`V${i}=$V${i + 1}`);
  lines.push(`V${length}=end`);
  return lines.join('\n');
}

describe('parseEnv', () => {
  it('reads KEY=VALUE lines, comments, export, quotes and inline comments', () => {
    const { entries, issues } = parseEnv(
      ['# comment', '', 'A=1', 'export B = two ', 'C="x y"', "D='$A literal'", 'E=val # note', 'F=a=b'].join('\n'),
    );
    expect([...entries].map(([k, v]) => [k, v.value])).toEqual([
      ['A', '1'],
      ['B', 'two'],
      ['C', 'x y'],
      ['D', '$A literal'],
      ['E', 'val'],
      ['F', 'a=b'],
    ]);
    expect(issues).toEqual([]);
  });

  it('ignores and reports lines with an invalid name (rule 6)', () => {
    const { entries, issues } = parseEnv('1BAD=x\nGOOD-NAME=y\nno equals\nOK=1');
    expect([...entries.keys()]).toEqual(['OK']);
    expect(issues.map((i) => i.line)).toEqual([1, 2, 3]);
  });
});

describe('substitute', () => {
  it('replaces ${NAME} placeholders (rule 1)', () => {
    expect(render('HOST=db\nPORT=5432', 'url=${HOST}:${PORT}').text).toBe('url=db:5432');
  });

  it('resolves composite values with $NAME and ${NAME}, whatever the order of lines (rule 2)', () => {
    const r = render('URL=http://$HOST:${PORT}/x\nHOST=db\nPORT=80', '${URL}');
    expect(r.text).toBe('http://db:80/x');
  });

  it('resolves a chain of exactly 10 levels (rule 3)', () => {
    const r = render(chain(10), '[${V1}]');
    expect(r.text).toBe('[end]');
    expect(r.env.problems).toEqual([]);
  });

  it('keeps the placeholder of a chain of 11 levels and reports the depth (rule 3)', () => {
    const r = render(chain(11), '[${V1}] [${V2}]');
    expect(r.text).toBe('[${V1}] [end]');
    expect(r.unresolved).toEqual(['V1']);
    expect(r.env.problems).toEqual([
      { kind: 'depth', name: 'V1', path: ['V1', 'V2', 'V3', 'V4', 'V5', 'V6', 'V7', 'V8', 'V9', 'V10', 'V11'] },
    ]);
  });

  it('resolves a chain of 200,000 variables without exhausting the stack: the last 10 resolve, the root cause is reported once', () => {
    const env = resolveEnv(parseEnv(chain(200_000)).entries);
    expect(env.values.size).toBe(10);
    expect(env.values.get('V199991')).toBe('end');
    // The 11th from the end is too deep; the ones before it depend on it (unresolvable, not reported).
    expect(env.problems).toEqual([expect.objectContaining({ kind: 'depth', name: 'V199990' })]);
    expect(env.unresolvable.size).toBe(199_990);
  });

  it('reports every member of a cycle of 100,000 variables, without exhausting the stack', () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `C${i}=$C${(i + 1) % 100_000}`);
    const env = resolveEnv(parseEnv(lines.join('\n')).entries);
    expect(env.values.size).toBe(0);
    expect(env.problems).toHaveLength(100_000);
    expect(env.problems[0]).toMatchObject({ kind: 'cycle', name: 'C0' });
  });

  it('reports a self-reference and keeps the placeholder (rule 4)', () => {
    const r = render('A=x$A', '${A}');
    expect(r.text).toBe('${A}');
    expect(r.env.problems).toEqual([{ kind: 'cycle', name: 'A', path: ['A', 'A'] }]);
  });

  it('reports a two-variable cycle with both names (rule 4)', () => {
    const r = render('A=$B\nB=$A\nC=ok', '${A} ${B} ${C}');
    expect(r.text).toBe('${A} ${B} ok');
    expect(r.env.problems.map((p) => p.kind)).toEqual(['cycle', 'cycle']);
    expect(r.env.problems[0]).toMatchObject({ path: ['A', 'B', 'A'] });
  });

  it('reports a three-variable cycle, and a variable that depends on it stays unresolved', () => {
    const r = render('A=$B\nB=$C\nC=$A\nD=see $A', '${D}');
    expect(r.text).toBe('${D}');
    expect(r.unresolved).toEqual(['D']);
    expect(r.env.problems).toHaveLength(3);
    expect(r.env.problems[0]).toMatchObject({ kind: 'cycle', path: ['A', 'B', 'C', 'A'] });
  });

  it('keeps a missing variable as ${NAME} (rule 5), in files and in values', () => {
    const r = render('A=pre-$NOPE-${NOPE2}', '${A} ${MISSING}');
    expect(r.text).toBe('pre-$NOPE-${NOPE2} ${MISSING}');
    expect(r.missing).toEqual(['MISSING']);
  });

  it('keeps invalid placeholders as written (rule 6)', () => {
    const r = render('A=1', '${1A} ${A-B} ${} ${ A } $A ${A');
    expect(r.text).toBe('${1A} ${A-B} ${} ${ A } $A ${A');
  });

  it('treats \\$ as a literal dollar in values and \\${ as a literal ${ in files', () => {
    const r = render('PRICE=\\$5\nA=1', 'cost ${PRICE} \\${A} ${A}');
    expect(r.text).toBe('cost $5 ${A} 1');
  });

  it('never runs commands', () => {
    const r = render('A=$(touch /tmp/pwned)\nB=`id`', '${A} ${B}');
    expect(r.text).toBe('$(touch /tmp/pwned) `id`');
  });

  it('refuses a doubling chain that would exceed the value cap', () => {
    const lines = ['X0=' + 'a'.repeat(1024)];
    for (let i = 1; i <= 9; i++) lines.push(`X${i}=$X${i - 1}$X${i - 1}`);
    const r = render(lines.join('\n'), '${X9}', { maxValueLength: 64 * 1024 });
    expect(r.text).toBe('${X9}');
    expect(r.env.problems.find((p) => p.kind === 'too-large')).toMatchObject({ name: 'X7', length: 128 * 1024 });
  });

  it('refuses output past the output cap', () => {
    expect(() => render('A=' + 'a'.repeat(1000), '${A}'.repeat(100), { maxOutputLength: 50_000 })).toThrow(SubstitutionLimitError);
  });

  it('leaves text without placeholders unchanged', () => {
    const text = 'no $placeholders here, just $5 and \\$ and {braces}';
    expect(render('A=1', text).text).toBe(text);
  });
});

describe('resolvedLength', () => {
  const total = (env: ReturnType<typeof resolveEnv>) => [...env.values.values()].reduce((n, v) => n + v.length, 0);

  it('counts what resolveEnv returns: escapes, literals, missing and invalid references, cycles, depth and size failures', () => {
    const envs = [
      'A=1\nB=$A$A\nC=${B}${B}x\nD=$NOPE\nE=\\$A\nF=${1X}$A',
      `X='$literal'\nY=$X$X\nZ=${'$Y'.repeat(30)}`,
      chain(14) + '\nW=$V1 and $V14',
      `B=${'y'.repeat(4000)}\nC=${'$B'.repeat(300)}\nD=$C\nE=$D$D$D`,
      `E=${'\\$'.repeat(1000)}$F\nF=ab`,
      'A=$B\nB=$A\nC=$A$A$A\nD=x$C\nE=plain\nS=$S',
    ];
    for (const text of envs) {
      const { entries } = parseEnv(text);
      expect(resolvedLength(entries, Number.MAX_SAFE_INTEGER)).toBe(total(resolveEnv(entries)));
    }
  });

  it('agrees with resolveEnv on 2,000 random .env files (references, cycles, escapes, literals, limits)', () => {
    // A small deterministic generator (mulberry32), so a failure names a reproducible seed.
    let seed = 0x5eed;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const names = ['A', 'B', 'C', 'D', 'E', 'F'];
    const pieces = [...names.map((n) => `$${n}`), ...names.map((n) => `\${${n}}`), 'xy', '\\$', '${1X}', '$NOPE', '${}', '-'];
    for (let round = 0; round < 2_000; round++) {
      const lines = names.map((name) => {
        if (random() < 0.15) return `${name}='$${pick(names)}'`; // a literal
        return `${name}=${Array.from({ length: Math.floor(random() * 5) }, () => pick(pieces)).join('')}`;
      });
      const { entries } = parseEnv(lines.join('\n'));
      const options = random() < 0.5 ? {} : { maxDepth: 1 + Math.floor(random() * 3), maxValueLength: 5 + Math.floor(random() * 40) };
      expect({ round, env: lines, counted: resolvedLength(entries, Number.MAX_SAFE_INTEGER, options) }).toEqual({
        round,
        env: lines,
        counted: total(resolveEnv(entries, options)),
      });
    }
  });

  it('follows the same limits as resolveEnv when given other ones', () => {
    const { entries } = parseEnv(`${chain(4)}\nBIG=${'z'.repeat(50)}\nTWICE=$BIG$BIG`);
    const options = { maxDepth: 2, maxValueLength: 60 };
    expect(resolvedLength(entries, Number.MAX_SAFE_INTEGER, options)).toBe(total(resolveEnv(entries, options)));
  });

  it('stops once past the limit, before the whole .env is walked', () => {
    // 200 variables of 1 MiB each, from a .env of a few kilobytes: 200 MiB once resolved.
    const lines = [`A=${'a'.repeat(1024)}`, 'B=' + '$A'.repeat(1024)];
    for (let i = 0; i < 200; i++) lines.push(`C${i}=$B`);
    const { entries } = parseEnv(lines.join('\n'));
    const counted = resolvedLength(entries, 8 << 20);
    expect(counted).toBeGreaterThan(8 << 20);
    expect(counted).toBeLessThan(16 << 20);
  });

  it('walks a chain of any length, as resolveEnv does', () => {
    const { entries } = parseEnv(chain(200_000));
    // Past depth 10 nothing resolves: V199991..V200000 hold "end" (3 characters each).
    expect(resolvedLength(entries, Number.MAX_SAFE_INTEGER)).toBe(30);
    expect(total(resolveEnv(entries))).toBe(30);
  });
});
