/** Row-edit text split into the text stream's calls (src/worker/output/row-edit-text.ts). */
import { describe, expect, it } from 'vitest';
import { rowEditsTellSomething, tellRowEdits } from '../../../../src/worker/output/row-edit-text.js';

function told(data: string): string[] {
  const calls: string[] = [];
  tellRowEdits(
    {
      text: (s) => calls.push(`text ${s}`),
      newline: () => calls.push('newline'),
      rewriteLine: () => calls.push('rewrite'),
    },
    data,
  );
  return calls;
}

describe('row-edit text', () => {
  it('tells text as it comes, a bare CR as a rewrite, a CRLF as a line end, a backspace as nothing', () => {
    expect(told('p 10%\rp 99%\r\ndone')).toEqual([
      'text p 10%',
      'rewrite',
      'text p 99%',
      'newline',
      'text done',
    ]);
    expect(told('|\b/\b-')).toEqual(['text |', 'text /', 'text -']);
    expect(told('\r\r\n')).toEqual(['rewrite', 'newline']);
    expect(told('\b\b')).toEqual([]);
  });

  it('knows when backspaces alone make it nothing to tell', () => {
    expect(rowEditsTellSomething('\b\b\b')).toBe(false);
    expect(rowEditsTellSomething('')).toBe(false);
    expect(rowEditsTellSomething('\b\r')).toBe(true);
    expect(rowEditsTellSomething('x\b')).toBe(true);
  });
});
