import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/exit-codes.js';
import { isId, pick } from '../../src/resolve.js';

const A = { id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', name: 'Demo' };
const B = { id: '3f2504e0-4f89-41d3-9a0c-0305e82c3302', name: 'demo' };
const C = { id: '3f2504e0-4f89-41d3-9a0c-0305e82c3303', name: 'Other' };

const failure = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error as { message: string; exitCode: number };
  }
  throw new Error('expected a failure');
};

describe('isId', () => {
  it('takes UUIDs in any case and nothing else', () => {
    expect(isId(A.id)).toBe(true);
    expect(isId(A.id.toUpperCase())).toBe(true);
    expect(isId('Demo')).toBe(false);
    expect(isId(`${A.id}x`)).toBe(false);
  });
});

describe('pick (name resolution)', () => {
  it('finds by id first, even when a name would be ambiguous', () => {
    expect(pick([A, B, C], B.id, 'project', 'you can see')).toBe(B);
  });

  it('finds by name case-insensitively, ignoring surrounding spaces', () => {
    expect(pick([A, C], ' DEMO ', 'project', 'you can see')).toBe(A);
  });

  it('is not found (exit 6) for an unknown name', () => {
    const error = failure(() => pick([A, C], 'Missing', 'vibe', 'in Demo'));
    expect(error).toMatchObject({ exitCode: EXIT.notFound, message: 'no vibe named "Missing" in Demo' });
  });

  it('is a usage error (exit 2) listing the candidates for an ambiguous name', () => {
    const error = failure(() => pick([A, B, C], 'demo', 'cut', 'in Demo', (item) => `${item.name} (vibe)`));
    expect(error.exitCode).toBe(EXIT.usage);
    expect(error.message).toBe(`"demo" names 2 cuts in Demo; use an id:\n  Demo (vibe)  ${A.id}\n  demo (vibe)  ${B.id}`);
  });

  it('takes a file name without its extension, or a prefix, when it names one; the whole name first', () => {
    const mix = { id: '3f2504e0-4f89-41d3-9a0c-0305e82c3304', name: 'mix.wav' };
    const mixStems = { id: '3f2504e0-4f89-41d3-9a0c-0305e82c3305', name: 'mix stems.zip' };
    const bass = { id: '3f2504e0-4f89-41d3-9a0c-0305e82c3306', name: 'Bass DI.wav' };
    expect(pick([mix, mixStems, bass], 'mix', 'file', 'in cut "Final"')).toBe(mix);
    expect(pick([mix, mixStems, bass], 'bass', 'file', 'in cut "Final"')).toBe(bass);
    expect(pick([mix, mixStems, bass], 'mix s', 'file', 'in cut "Final"')).toBe(mixStems);
    expect(failure(() => pick([mix, mixStems], 'mi', 'file', 'in cut "Final"')).exitCode).toBe(EXIT.usage);
  });

  it('suggests names that hold what was typed', () => {
    const mix = { id: '3f2504e0-4f89-41d3-9a0c-0305e82c3304', name: 'final mix.wav' };
    expect(failure(() => pick([mix, C], 'mix', 'file', 'in cut "Final"')).message).toBe('no file named "mix" in cut "Final"; did you mean "final mix.wav"?');
  });
});
